//! Umwelt's own MiniLM against ONNX Runtime on the same file: the same vectors to within 10⁻⁵ in
//! cosine on every text of the bench and the dictation set and on the edges (empty, one
//! character, past the 256-token cut, other scripts, emoji), the same nearest notes for a search,
//! a text's vector the same bit for bit whatever batch it comes in, and meaning found by meaning.

use umwelt::embed::minilm::Simd;
use umwelt::embed::{gemm, Embedder, Engine};
use umwelt::models::{self, EMBED_MODEL, EMBED_TOKENIZER};

use crate::common;

fn load(engine: Engine) -> Embedder {
    let model = models::resolve(EMBED_MODEL).unwrap();
    let tokenizer = models::resolve(EMBED_TOKENIZER).unwrap();
    Embedder::load_with(&model, &tokenizer, engine).unwrap()
}

fn texts() -> Vec<String> {
    let root = env!("CARGO_MANIFEST_DIR");
    let bench = std::fs::read_to_string(format!("{root}/src/bench/embed_texts.txt")).unwrap();
    let dictation = std::fs::read_to_string(format!("{root}/benches/data/dictation.txt")).unwrap();
    let mut out: Vec<String> = bench
        .lines()
        .chain(
            dictation
                .lines()
                .filter(|l| !l.starts_with('#') && !l.starts_with("vocabulary:")),
        )
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    out.extend(
        [
            "",
            "a",
            "Überraschung! Das Café öffnet um 9 Uhr — 東京で会いましょう 🎉",
            "SELECT * FROM memories; -- \"quotes\" and <tags> & ampersands",
            "   lots   of    spaces\tand\ttabs\nand a newline   ",
        ]
        .map(str::to_string),
    );
    // Past the 256-token cut: both engines see its first 256 tokens.
    out.push("the quick brown fox jumps over the lazy dog ".repeat(40));
    out
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn umwelts_model_gives_onnx_runtimes_vectors() {
    let _process = common::shared();
    let ours = load(Engine::Umwelt);
    let reference = load(Engine::OnnxRuntime);
    eprintln!("engine: {}", ours.engine());
    assert!(ours.engine().starts_with("umwelt ("), "{}", ours.engine());
    let texts = texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    // The reference one text at a time (a padded batch changes nothing but costs more).
    let want: Vec<Vec<f32>> = refs
        .iter()
        .map(|t| reference.embed_one(t).unwrap())
        .collect();
    let got = ours.embed(&refs).unwrap();
    let mut worst = (1.0f32, "");
    for ((g, w), t) in got.iter().zip(&want).zip(&refs) {
        assert_eq!(g.len(), 384);
        let norm: f32 = g.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "unit length: {norm}");
        let c = cosine(g, w);
        if c < worst.0 {
            worst = (c, t);
        }
    }
    eprintln!(
        "lowest cosine to ONNX Runtime's vector: {} ({:?})",
        worst.0, worst.1
    );
    // Measured on this suite: 0.9999992 at the lowest; the activations taken to 16 bits at each
    // product (two int8 digits, `embed::gemm`) are the difference. bf16 activations gave
    // 0.999985, which this bar would refuse.
    assert!(worst.0 >= 0.999995, "{worst:?}");
}

#[test]
fn a_texts_vector_does_not_depend_on_its_batch() {
    let _process = common::shared();
    let ours = load(Engine::Umwelt);
    let texts = texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let together = ours.embed(&refs).unwrap();
    // Alone, in reverse order, and in pairs: the same bits.
    for (t, v) in refs.iter().zip(&together) {
        assert_eq!(&ours.embed_one(t).unwrap(), v, "{t:?} alone");
    }
    let mut reversed = refs.clone();
    reversed.reverse();
    let back = ours.embed(&reversed).unwrap();
    for (v, w) in back.iter().rev().zip(&together) {
        assert_eq!(v, w);
    }
    for pair in refs.chunks(2).zip(together.chunks(2)) {
        assert_eq!(ours.embed(pair.0).unwrap(), pair.1);
    }
}

#[test]
fn meaning_is_found_by_meaning() {
    let _process = common::shared();
    let ours = load(Engine::Umwelt);
    let notes = [
        "remember to buy milk and eggs on the way home",
        "the dentist appointment moved to Tuesday at nine",
        "the wifi password at the cabin is on the fridge door",
        "call the plumber about the dripping tap",
    ];
    let questions = [
        ("what did I need from the shop?", 0),
        ("when is my teeth check-up?", 1),
        ("what is the code for the internet at the cabin?", 2),
        ("who fixes the leaking faucet?", 3),
    ];
    let v = ours.embed(&notes).unwrap();
    for (q, want) in questions {
        let qv = ours.embed_one(q).unwrap();
        let best = (0..notes.len())
            .max_by(|&a, &b| cosine(&qv, &v[a]).total_cmp(&cosine(&qv, &v[b])))
            .unwrap();
        assert_eq!(best, want, "{q:?} found {:?}", notes[best]);
    }
}

/// Notes made of everyday parts, many alike (the hard case: near ties), searched by other such
/// notes with both engines' vectors: the ten nearest agree.
#[test]
fn a_search_finds_the_same_nearest_notes_with_either_engine() {
    let _process = common::shared();
    let ours = load(Engine::Umwelt);
    let reference = load(Engine::OnnxRuntime);
    let who = [
        "Anna",
        "the landlord",
        "my brother",
        "the dentist",
        "Okonkwo",
        "the bank",
    ];
    let did = [
        "called about",
        "sent",
        "booked",
        "paid for",
        "lost",
        "asked about",
        "fixed",
    ];
    let what = [
        "the heating",
        "the train tickets",
        "the tax form",
        "the garden fence",
        "the passport",
        "the recipe for lentil soup",
        "the bike lights",
        "the spare keys",
        "the piano lessons",
    ];
    let when = [
        "on Monday",
        "next week",
        "before Friday",
        "after lunch",
        "in March",
        "",
    ];
    let mut texts = Vec::new();
    for (i, w) in who.iter().enumerate() {
        for (j, d) in did.iter().enumerate() {
            for (k, o) in what.iter().enumerate() {
                texts.push(format!("{w} {d} {o} {}", when[(i + j + k) % when.len()]));
            }
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let (a, b) = (ours.embed(&refs).unwrap(), reference.embed(&refs).unwrap());
    let top = |v: &[Vec<f32>], q: usize| {
        let mut order: Vec<usize> = (0..v.len()).filter(|&i| i != q).collect();
        order.sort_by(|&x, &y| cosine(&v[q], &v[y]).total_cmp(&cosine(&v[q], &v[x])));
        order.truncate(10);
        order
    };
    let queries: Vec<usize> = (0..texts.len()).step_by(7).collect();
    let (mut same, mut shared) = (0, 0);
    for &q in &queries {
        let (x, y) = (top(&a, q), top(&b, q));
        same += (x == y) as usize;
        shared += x.iter().filter(|i| y.contains(i)).count();
    }
    let overlap = shared as f64 / (10 * queries.len()) as f64;
    eprintln!(
        "{} notes, {} searches: the same ten in the same order {same}, top-10 overlap {:.2} %",
        texts.len(),
        queries.len(),
        overlap * 100.0
    );
    assert!(overlap >= 0.99, "top-10 overlap {overlap}");
}

/// Every matrix-product kernel and every width of the rest that this CPU runs: the same vectors
/// as ONNX Runtime's, and the width changes no bit.
#[test]
fn every_kernel_this_cpu_runs_gives_the_same_vectors() {
    let _process = common::shared();
    let reference = load(Engine::OnnxRuntime);
    let mut ours = load(Engine::Umwelt);
    let texts = texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let want: Vec<Vec<f32>> = refs
        .iter()
        .map(|t| reference.embed_one(t).unwrap())
        .collect();
    eprintln!(
        "gemm kernels skipped on this CPU: {:?}",
        gemm::unavailable()
    );
    for g in gemm::available() {
        let mut first: Option<Vec<Vec<f32>>> = None;
        for simd in Simd::available() {
            ours.use_kernels(g, simd).unwrap();
            let got = ours.embed(&refs).unwrap();
            let worst = got
                .iter()
                .zip(&want)
                .map(|(a, b)| cosine(a, b))
                .fold(1.0f32, f32::min);
            eprintln!("{}: lowest cosine {worst}", ours.engine());
            assert!(worst >= 0.999995, "{}: {worst}", ours.engine());
            match &first {
                None => first = Some(got),
                Some(f) => assert_eq!(f, &got, "{} changed a bit", ours.engine()),
            }
        }
    }
    // A level this CPU does not run is refused by the safe call, and nothing changes.
    ours.use_kernels(*gemm::fastest(), Simd::available()[0])
        .unwrap();
    let before = ours.engine();
    for simd in [Simd::Avx512, Simd::Avx2] {
        if !umwelt::cpu::supports(simd.needs()) {
            assert!(
                ours.use_kernels(*gemm::fastest(), simd).is_err(),
                "{simd:?}"
            );
            assert_eq!(ours.engine(), before);
        }
    }
}
