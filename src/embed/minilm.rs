//! all-MiniLM-L6-v2 computed by Umwelt itself, from the weights of the same ONNX file ONNX
//! Runtime loads (`minilm-l6-v2-int8.onnx`).
//!
//! Why not ONNX Runtime: the file stores its weights as int8 with a scale per column, and ONNX
//! Runtime turns them back into f32 when it loads the file (90 MB held), then runs an f32 graph
//! over a batch padded to its longest text. Here:
//! - the weights stay the file's int8 bytes (10.6 MB), the activations are taken to 16 bits at
//!   each product (two int8 digits) and everything else is f32 ([`super::gemm`] says why that
//!   changes the vectors by less than 10⁻⁶ in cosine);
//! - the products are sums of whole numbers, on AMX tiles or `vpdpbusd` where the CPU has them
//!   ([`super::gemm`]);
//! - a batch is packed, not padded: every text's tokens are rows of one matrix for the linear
//!   layers, and attention runs within each text, so a short text costs its own tokens only;
//! - a batch is cut in two halves of about the same number of tokens, one per core.
//!
//! The architecture is BERT's: embeddings (word + position + token type 0, LayerNorm), six layers
//! of 12-head self-attention (32 dimensions a head) and a 1536-wide GELU feed-forward block, each
//! with a residual connection and a LayerNorm (ε = 10⁻¹²).

use super::gemm::{self, Gemm, Operand, Packed};

use super::onnx_file::{Graph, ParseError};
use super::team::Team;

/// Width of the hidden state.
const HIDDEN: usize = 384;
const HEADS: usize = 12;
const HEAD_DIM: usize = HIDDEN / HEADS;
const FFN: usize = 1536;
const LAYERS: usize = 6;
/// Positions the file has embeddings for.
const POSITIONS: usize = 512;
const LN_EPS: f32 = 1e-12;
/// A batch of more tokens than this is cut in two, a half per core; a smaller one, or one text,
/// runs as one, with the products shared by both cores ([`super::team`]).
const SPLIT_FROM_TOKENS: usize = 64;

/// A linear layer: `y = (x · q) · scale + bias`, `q` the file's int8 weights packed.
struct Linear {
    w: Packed,
    scale: Vec<f32>,
    bias: Vec<f32>,
}

/// A LayerNorm's weights.
struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

struct Layer {
    /// Query, key and value in one product (1152 columns: q, then k, then v).
    qkv: Linear,
    attn_out: Linear,
    attn_norm: Norm,
    ffn_in: Linear,
    ffn_out: Linear,
    ffn_norm: Norm,
}

/// The model, loaded.
pub struct MiniLm {
    vocab: usize,
    word_q: Vec<i8>,
    word_scale: Vec<f32>,
    /// Position embedding plus the embedding of token type 0, per position.
    position: Vec<f32>,
    embed_norm: Norm,
    layers: Vec<Layer>,
    gemm: Gemm,
    simd: Simd,
    /// A second core for the products of a short batch (none on one core).
    team: Option<Team>,
}

impl MiniLm {
    /// Take the weights out of the model file's graph; the products and the rest run on the
    /// fastest kernels this CPU has.
    pub fn from_graph(g: &Graph) -> Result<MiniLm, ParseError> {
        let word = "inner.embeddings.word_embeddings.weight";
        let (word_q, word_scale, vocab) = dequant_rows(g, word)?;
        let (pos_q, pos_scale, positions) =
            dequant_rows(g, "inner.embeddings.position_embeddings.weight")?;
        if positions < POSITIONS {
            return Err(format!(
                "it has {positions} positions, expected {POSITIONS}"
            ));
        }
        let types_name = "inner.embeddings.token_type_embeddings.weight";
        let types = g
            .tensor(types_name)?
            .f32s(types_name, &[2, HIDDEN as i64])?;
        let mut position = vec![0f32; POSITIONS * HIDDEN];
        for p in 0..POSITIONS {
            for d in 0..HIDDEN {
                position[p * HIDDEN + d] = pos_q[p * HIDDEN + d] as f32 * pos_scale[p] + types[d];
            }
        }
        let embed_norm = norm(g, "inner.embeddings.LayerNorm")?;
        let mut layers = Vec::with_capacity(LAYERS);
        for l in 0..LAYERS {
            let p = format!("inner.encoder.layer.{l}.");
            let q = linear_parts(g, &format!("{p}attention.self.query"), HIDDEN, HIDDEN)?;
            let k = linear_parts(g, &format!("{p}attention.self.key"), HIDDEN, HIDDEN)?;
            let v = linear_parts(g, &format!("{p}attention.self.value"), HIDDEN, HIDDEN)?;
            layers.push(Layer {
                qkv: fuse(&[q, k, v], HIDDEN),
                attn_out: linear(g, &format!("{p}attention.output.dense"), HIDDEN, HIDDEN)?,
                attn_norm: norm(g, &format!("{p}attention.output.LayerNorm"))?,
                ffn_in: linear(g, &format!("{p}intermediate.dense"), HIDDEN, FFN)?,
                ffn_out: linear(g, &format!("{p}output.dense"), FFN, HIDDEN)?,
                ffn_norm: norm(g, &format!("{p}output.LayerNorm"))?,
            });
        }
        Ok(MiniLm {
            vocab,
            word_q,
            word_scale,
            position,
            embed_norm,
            layers,
            gemm: *gemm::fastest(),
            simd: Simd::available()[0],
            team: (crate::optimisations::threads() >= 2)
                .then(Team::start)
                .flatten(),
        })
    }

    /// Run the products on `gemm` and the rest for `simd` from now on (the tests try each one
    /// the CPU has; the vectors agree to f32's rounding, and `simd` changes no bit). Refused,
    /// changing nothing, where this CPU cannot run them.
    pub fn use_kernels(&mut self, gemm: Gemm, simd: Simd) -> Result<(), String> {
        for (name, needs) in [(gemm.name, gemm.needs), (simd.name(), simd.needs())] {
            if !crate::cpu::supports(needs) {
                return Err(format!(
                    "this CPU cannot run the {name} kernels ({needs:?})"
                ));
            }
        }
        // SAFETY: both were just checked against what the CPU reports.
        unsafe { self.use_kernels_unchecked(gemm, simd) };
        Ok(())
    }

    /// [`MiniLm::use_kernels`] without the check.
    ///
    /// # Safety
    /// The CPU must run `gemm.needs` and `simd.needs()` ([`crate::cpu::supports`]): their code
    /// is compiled for those instructions.
    pub unsafe fn use_kernels_unchecked(&mut self, gemm: Gemm, simd: Simd) {
        self.gemm = gemm;
        self.simd = simd;
    }

    /// Which matrix-product kernel it runs, and what the rest is compiled for.
    pub fn kernel(&self) -> String {
        format!("{}, {:?}", self.gemm.name, self.simd).to_lowercase()
    }

    /// Bytes of weights held.
    pub fn bytes(&self) -> usize {
        let linear = |l: &Linear| l.w.bytes() + (l.scale.len() + l.bias.len()) * 4;
        self.word_q.len()
            + self.word_scale.len() * 4
            + self.position.len() * 4
            + self
                .layers
                .iter()
                .map(|l| {
                    linear(&l.qkv) + linear(&l.attn_out) + linear(&l.ffn_in) + linear(&l.ffn_out)
                })
                .sum::<usize>()
    }

    /// The mean-pooled, unit-length sentence vector of each text's token ids (every id below
    /// the vocabulary's size, at most 512 tokens a text, at least one).
    pub fn embed(&self, texts: &[&[u32]], threads: usize) -> Vec<Vec<f32>> {
        assert!(
            texts.iter().all(|t| !t.is_empty()
                && t.len() <= POSITIONS
                && t.iter().all(|&i| (i as usize) < self.vocab)),
            "token ids the model cannot take"
        );
        let total: usize = texts.iter().map(|t| t.len()).sum();
        if threads < 2 || texts.len() < 2 || total <= SPLIT_FROM_TOKENS {
            if threads >= 2 {
                if let Some(team) = &self.team {
                    team.wake();
                    return self.forward(texts, Some(team));
                }
            }
            return self.forward(texts, None);
        }
        // Two runs of texts with about half the tokens each (texts stay in order).
        let mut acc = 0;
        let cut = texts
            .iter()
            .position(|t| {
                acc += t.len();
                acc * 2 >= total
            })
            .map_or(texts.len() - 1, |i| i + 1)
            .clamp(1, texts.len() - 1);
        let (first, second) = texts.split_at(cut);
        std::thread::scope(|s| {
            let other = s.spawn(|| self.forward(second, None));
            let mut out = self.forward(first, None);
            out.extend(other.join().expect("the second half of a batch panicked"));
            out
        })
    }

    /// The model over `texts`, their tokens packed as the rows of one matrix, compiled for the
    /// widest vectors this CPU has (the same arithmetic in the same order at every width).
    fn forward(&self, texts: &[&[u32]], team: Option<&Team>) -> Vec<Vec<f32>> {
        match self.simd {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `simd` is only set to a level the CPU runs (`use_kernels` checks it, and
            // `use_kernels_unchecked` asks its caller to).
            Simd::Avx512 => unsafe { forward_avx512(self, texts, team) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Simd::Avx2 => unsafe { forward_avx2(self, texts, team) },
            _ => forward(self, texts, team),
        }
    }

    /// `C = A · W`, on both cores when `team` is given.
    fn product(&self, team: Option<&Team>, a: &Operand, w: &Packed, c: &mut [f32]) {
        match team {
            Some(team) => team.run(&self.gemm, a, w, c),
            None => self.gemm.run(a, w, c),
        }
    }
}

/// What the element-wise work (all but the products) is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    Avx512,
    Avx2,
    Plain,
}

impl Simd {
    /// The instructions its code is compiled for ([`crate::cpu`]).
    pub fn needs(self) -> crate::cpu::Level {
        match self {
            Simd::Avx512 => crate::cpu::Level::Avx512,
            Simd::Avx2 => crate::cpu::Level::Avx2,
            Simd::Plain => crate::cpu::Level::Portable,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Simd::Avx512 => "avx512",
            Simd::Avx2 => "avx2",
            Simd::Plain => "plain",
        }
    }

    /// Every level this CPU runs, widest first.
    pub fn available() -> Vec<Simd> {
        [Simd::Avx512, Simd::Avx2, Simd::Plain]
            .into_iter()
            .filter(|s| crate::cpu::supports(s.needs()))
            .collect()
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
unsafe fn forward_avx512(m: &MiniLm, texts: &[&[u32]], team: Option<&Team>) -> Vec<Vec<f32>> {
    forward(m, texts, team)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn forward_avx2(m: &MiniLm, texts: &[&[u32]], team: Option<&Team>) -> Vec<Vec<f32>> {
    forward(m, texts, team)
}

// Everything below is `inline(always)`, so each `forward_*` above compiles all of it for its
// own instructions. No sum is reordered by the width: a sum over a row runs in 16 lanes in a
// fixed order ([`sum16`]), and nothing is fused into a multiply-add.

#[inline(always)]
fn forward(model: &MiniLm, texts: &[&[u32]], team: Option<&Team>) -> Vec<Vec<f32>> {
    let m: usize = texts.iter().map(|t| t.len()).sum();
    let mp = gemm::padded_rows(m);
    let mut x = vec![0f32; m * HIDDEN];
    let mut row = 0;
    for t in texts {
        for (pos, &id) in t.iter().enumerate() {
            let id = id as usize;
            let (q, s) = (&model.word_q[id * HIDDEN..][..HIDDEN], model.word_scale[id]);
            let p = &model.position[pos * HIDDEN..][..HIDDEN];
            let out = &mut x[row * HIDDEN..][..HIDDEN];
            for d in 0..HIDDEN {
                out[d] = q[d] as f32 * s + p[d];
            }
            row += 1;
        }
    }
    layer_norm(&mut x, &model.embed_norm);

    // Scratch: the products' left operand (as digits), and the products.
    let mut a = Operand::new(m, FFN);
    let mut wide = gemm::Aligned::<f32>::zeroed(mp * FFN);
    let mut narrow = gemm::Aligned::<f32>::zeroed(mp * HIDDEN);
    let mut ctx = vec![0f32; m * HIDDEN];
    let mut scratch = Attention::default();
    for layer in &model.layers {
        // Attention.
        a.set(&x, HIDDEN);
        let n = layer.qkv.w.n();
        model.product(team, &a, &layer.qkv.w, &mut wide);
        finish(&mut wide[..m * n], &layer.qkv);
        attention(&wide[..m * n], texts, &mut ctx, &mut scratch);
        a.set(&ctx, HIDDEN);
        model.product(team, &a, &layer.attn_out.w, &mut narrow);
        residual_norm(
            &mut x,
            &narrow[..m * HIDDEN],
            &layer.attn_out,
            &layer.attn_norm,
        );
        // Feed-forward.
        a.set(&x, HIDDEN);
        model.product(team, &a, &layer.ffn_in.w, &mut wide);
        finish_gelu(&mut wide[..m * FFN], &layer.ffn_in);
        a.set(&wide[..m * FFN], FFN);
        model.product(team, &a, &layer.ffn_out.w, &mut narrow);
        residual_norm(
            &mut x,
            &narrow[..m * HIDDEN],
            &layer.ffn_out,
            &layer.ffn_norm,
        );
    }

    let mut out = Vec::with_capacity(texts.len());
    let mut row = 0;
    for t in texts {
        let mut v = vec![0f32; HIDDEN];
        for r in row..row + t.len() {
            let x = &x[r * HIDDEN..][..HIDDEN];
            for d in 0..HIDDEN {
                v[d] += x[d];
            }
        }
        row += t.len();
        let count = t.len() as f32;
        v.iter_mut().for_each(|x| *x /= count);
        let norm = sum16_sq(&v).sqrt().max(1e-12);
        v.iter_mut().for_each(|x| *x /= norm);
        out.push(v);
    }
    out
}

/// Scale and bias each row of a product.
#[inline(always)]
fn finish(y: &mut [f32], l: &Linear) {
    let n = l.scale.len();
    for row in y.chunks_exact_mut(n) {
        for ((v, &s), &b) in row.iter_mut().zip(&l.scale).zip(&l.bias) {
            *v = *v * s + b;
        }
    }
}

/// The feed-forward block's middle: `gelu(product · scale + bias)`, in place.
#[inline(always)]
fn finish_gelu(y: &mut [f32], l: &Linear) {
    let n = l.scale.len();
    for row in y.chunks_exact_mut(n) {
        for ((v, &s), &b) in row.iter_mut().zip(&l.scale).zip(&l.bias) {
            *v = gelu(*v * s + b);
        }
    }
}

/// `x = LayerNorm(product · scale + bias + x)`.
#[inline(always)]
fn residual_norm(x: &mut [f32], y: &[f32], l: &Linear, n: &Norm) {
    let scale: &[f32; HIDDEN] = l.scale[..].try_into().expect("a 384-wide layer");
    let bias: &[f32; HIDDEN] = l.bias[..].try_into().expect("a 384-wide layer");
    for (xr, yr) in x.chunks_exact_mut(HIDDEN).zip(y.chunks_exact(HIDDEN)) {
        let xr: &mut [f32; HIDDEN] = xr.try_into().expect("whole rows");
        let yr: &[f32; HIDDEN] = yr.try_into().expect("whole rows");
        for c in 0..HIDDEN {
            xr[c] += yr[c] * scale[c] + bias[c];
        }
    }
    layer_norm(x, n);
}

#[inline(always)]
fn layer_norm(x: &mut [f32], n: &Norm) {
    let gamma: &[f32; HIDDEN] = n.gamma[..].try_into().expect("384 weights");
    let beta: &[f32; HIDDEN] = n.beta[..].try_into().expect("384 weights");
    for row in x.chunks_exact_mut(HIDDEN) {
        let row: &mut [f32; HIDDEN] = row.try_into().expect("whole rows");
        let mean = sum16(row) / HIDDEN as f32;
        let mut dev = [0f32; HIDDEN];
        for c in 0..HIDDEN {
            dev[c] = row[c] - mean;
        }
        let var = sum16_sq(&dev) / HIDDEN as f32;
        let inv = 1.0 / (var + LN_EPS).sqrt();
        for c in 0..HIDDEN {
            row[c] = dev[c] * inv * gamma[c] + beta[c];
        }
    }
}

/// The sum of `v` (a multiple of 16 long) in 16 lanes, then the lanes in order.
#[inline(always)]
fn sum16(v: &[f32]) -> f32 {
    let mut l = [0f32; 16];
    for c in v.chunks_exact(16) {
        let c: &[f32; 16] = c.try_into().expect("chunks of 16");
        for i in 0..16 {
            l[i] += c[i];
        }
    }
    fold16(&l)
}

/// The sum of the squares of `v`, as [`sum16`].
#[inline(always)]
fn sum16_sq(v: &[f32]) -> f32 {
    let mut l = [0f32; 16];
    for c in v.chunks_exact(16) {
        let c: &[f32; 16] = c.try_into().expect("chunks of 16");
        for i in 0..16 {
            l[i] += c[i] * c[i];
        }
    }
    fold16(&l)
}

#[inline(always)]
fn fold16(l: &[f32; 16]) -> f32 {
    let mut h = [0f32; 8];
    for i in 0..8 {
        h[i] = l[i] + l[i + 8];
    }
    ((h[0] + h[4]) + (h[2] + h[6])) + ((h[1] + h[5]) + (h[3] + h[7]))
}

/// A text's keys and values for one head, laid out for the loops below.
#[derive(Default)]
struct Attention {
    /// Keys transposed: `keys[d * len + j]` is dimension `d` of token `j`'s key.
    keys: Vec<f32>,
    scores: Vec<f32>,
}

/// Self-attention within each text: `qkv` holds, per token, its query, key and value (each
/// 384 wide, 12 heads of 32); the context vectors go to `ctx`. A token's scores against every
/// token of its text are one pass over the transposed keys (each score summed over the 32
/// dimensions in order); the softmax and the weighted sum of the values run across a row.
#[inline(always)]
fn attention(qkv: &[f32], texts: &[&[u32]], ctx: &mut [f32], s: &mut Attention) {
    let w = 3 * HIDDEN;
    let scale = 1.0 / (HEAD_DIM as f32).sqrt();
    let mut start = 0;
    for t in texts {
        let len = t.len();
        let rows = &qkv[start * w..(start + len) * w];
        let out_rows = &mut ctx[start * HIDDEN..(start + len) * HIDDEN];
        s.keys.resize(HEAD_DIM * len, 0.0);
        s.scores.resize(len, 0.0);
        for h in 0..HEADS {
            let (qo, ko, vo) = (
                h * HEAD_DIM,
                HIDDEN + h * HEAD_DIM,
                2 * HIDDEN + h * HEAD_DIM,
            );
            for (j, row) in rows.chunks_exact(w).enumerate() {
                let k: &[f32; HEAD_DIM] = row[ko..ko + HEAD_DIM].try_into().expect("a head");
                for (d, &kd) in k.iter().enumerate() {
                    s.keys[d * len + j] = kd;
                }
            }
            for (row, out) in rows.chunks_exact(w).zip(out_rows.chunks_exact_mut(HIDDEN)) {
                let q: &[f32; HEAD_DIM] = row[qo..qo + HEAD_DIM].try_into().expect("a head");
                let scores = &mut s.scores[..len];
                scores.fill(0.0);
                for (&qd, keys) in q.iter().zip(s.keys.chunks_exact(len)) {
                    for (sc, &k) in scores.iter_mut().zip(keys) {
                        *sc += qd * k;
                    }
                }
                let mut max = f32::NEG_INFINITY;
                for sc in scores.iter_mut() {
                    *sc *= scale;
                    max = max.max(*sc);
                }
                let mut sum = 0.0;
                for sc in scores.iter_mut() {
                    *sc = exp_nonpositive(*sc - max);
                    sum += *sc;
                }
                let mut acc = [0f32; HEAD_DIM];
                for (&p, vrow) in scores.iter().zip(rows.chunks_exact(w)) {
                    let v: &[f32; HEAD_DIM] = vrow[vo..vo + HEAD_DIM].try_into().expect("a head");
                    for d in 0..HEAD_DIM {
                        acc[d] += p * v[d];
                    }
                }
                let inv = 1.0 / sum;
                let out: &mut [f32; HEAD_DIM] =
                    (&mut out[qo..qo + HEAD_DIM]).try_into().expect("a head");
                for d in 0..HEAD_DIM {
                    out[d] = acc[d] * inv;
                }
            }
        }
        start += len;
    }
}

/// `eˣ` for `x ≤ 0` in f32, to within a few units in the last place (0 below −87): `x = n·ln 2
/// + r`, `|r| ≤ ln 2 / 2`, `eʳ` by its Taylor series to `r⁷`, times `2ⁿ` put in the exponent.
/// Arithmetic only, so a loop of them vectorises (libm's `expf` is a call per value).
#[inline(always)]
fn exp_nonpositive(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5 · 2²³: adding it rounds to a whole number
    let x = x.max(-87.0);
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let r = (x - n * 0.693_145_75) - n * 1.428_606_8e-6;
    let mut p = 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    let e = (t.to_bits() as i32 - ROUND.to_bits() as i32 + 127) as u32;
    p * f32::from_bits(e << 23)
}

/// GELU as the model defines it, `x · (1 + erf(x / √2)) / 2`.
#[inline(always)]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The error function in f32, to within 4·10⁻⁷ (a few units in the last place near ±1): a
/// rational function of `x` on [−4, 4] (odd numerator of degree 13, even denominator of degree
/// 8), ±1 beyond, where f32 cannot tell erf from 1. Arithmetic only, so a loop of them
/// vectorises.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10_f32;
    p = p * x2 + 2.770_681_4e-8;
    p = p * x2 - 2.101_024e-6;
    p = p * x2 - 5.692_506_4e-5;
    p = p * x2 - 7.349_906_3e-4;
    p = p * x2 - 2.954_6e-3;
    p = p * x2 - 1.609_603_3e-2;
    let mut q = -1.456_607_2e-5_f32;
    q = q * x2 - 2.133_740_6e-4;
    q = q * x2 - 1.682_827e-3;
    q = q * x2 - 7.373_329e-3;
    q = q * x2 - 1.426_473_9e-2;
    x * p / q
}

/// The int8 rows and per-row scales of an embedding table (`NAME_q`, `NAME_scale`, as the
/// file's `Cast`/`Mul` nodes make `NAME` of them), and its number of rows.
fn dequant_rows(g: &Graph, name: &str) -> Result<(Vec<i8>, Vec<f32>, usize), ParseError> {
    let (q, s) = quantized(g, name)?;
    let rows = match q.dims.as_slice() {
        [rows, cols] if *cols == HIDDEN as i64 && *rows > 0 => *rows as usize,
        d => {
            return Err(format!(
                "the table '{name}' is {d:?}, expected [rows, {HIDDEN}]"
            ))
        }
    };
    let dims = [rows as i64, HIDDEN as i64];
    let scale = s.f32s(name, &[rows as i64, 1])?;
    Ok((q.i8s(name, &dims)?, scale, rows))
}

/// The initializers a dequantised weight `name` is made from: `Mul(Cast(q), scale)`.
fn quantized<'g, 'a>(
    g: &'g Graph<'a>,
    name: &str,
) -> Result<
    (
        &'g super::onnx_file::Tensor<'a>,
        &'g super::onnx_file::Tensor<'a>,
    ),
    ParseError,
> {
    let mul = g
        .producer(name)
        .filter(|n| n.op_type == "Mul" && n.inputs.len() == 2)
        .ok_or_else(|| format!("'{name}' is not made from int8 weights and a scale"))?;
    let cast = g
        .producer(mul.inputs[0])
        .filter(|n| n.op_type == "Cast" && n.inputs.len() == 1)
        .ok_or_else(|| format!("'{name}' is not made from int8 weights"))?;
    Ok((g.tensor(cast.inputs[0])?, g.tensor(mul.inputs[1])?))
}

fn norm(g: &Graph, prefix: &str) -> Result<Norm, ParseError> {
    let get = |what: &str| {
        let name = format!("{prefix}.{what}");
        g.tensor(&name)?.f32s(&name, &[HIDDEN as i64])
    };
    Ok(Norm {
        gamma: get("weight")?,
        beta: get("bias")?,
    })
}

/// A linear layer as the file has it: int8 weights (row-major `k × n`), scales, bias.
type Parts = (Vec<i8>, Vec<f32>, Vec<f32>);

/// The int8 weights (row-major `k × n`), scales and bias of the linear layer `prefix`: the
/// `MatMul` whose result the file adds `prefix.bias` to.
fn linear_parts(g: &Graph, prefix: &str, k: usize, n: usize) -> Result<Parts, ParseError> {
    let bias_name = format!("{prefix}.bias");
    let bias = g.tensor(&bias_name)?.f32s(&bias_name, &[n as i64])?;
    let add = g
        .nodes
        .iter()
        .find(|node| node.op_type == "Add" && node.inputs.len() == 2 && node.inputs[1] == bias_name)
        .ok_or_else(|| format!("nothing adds '{bias_name}'"))?;
    let matmul = g
        .producer(add.inputs[0])
        .filter(|node| node.op_type == "MatMul" && node.inputs.len() == 2)
        .ok_or_else(|| format!("'{bias_name}' is not added to a matrix product"))?;
    let (q, s) = quantized(g, matmul.inputs[1])?;
    let name = matmul.inputs[1];
    Ok((
        q.i8s(name, &[k as i64, n as i64])?,
        s.f32s(name, &[1, n as i64])?,
        bias,
    ))
}

fn linear(g: &Graph, prefix: &str, k: usize, n: usize) -> Result<Linear, ParseError> {
    let (q, scale, bias) = linear_parts(g, prefix, k, n)?;
    Ok(Linear {
        w: Packed::new(&q, k, n),
        scale,
        bias,
    })
}

/// Linear layers over the same input, side by side as one.
fn fuse(parts: &[Parts], k: usize) -> Linear {
    let n: usize = parts.iter().map(|p| p.1.len()).sum();
    let mut q = vec![0i8; k * n];
    let mut col = 0;
    for (pq, ps, _) in parts {
        let pn = ps.len();
        for r in 0..k {
            q[r * n + col..r * n + col + pn].copy_from_slice(&pq[r * pn..(r + 1) * pn]);
        }
        col += pn;
    }
    Linear {
        w: Packed::new(&q, k, n),
        scale: parts.iter().flat_map(|p| p.1.iter().copied()).collect(),
        bias: parts.iter().flat_map(|p| p.2.iter().copied()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_is_within_four_parts_in_ten_million() {
        // erf(x) = 2/√π ∫₀ˣ exp(−t²) dt, integrated in f64 by Simpson's rule a thousandth at a
        // time (error far below f32's).
        let f = |t: f64| (-t * t).exp();
        let (mut exact, mut worst) = (0f64, 0f64);
        for i in 0..=6000 {
            let x = i as f64 / 1000.0;
            if i > 0 {
                let (a, h) = (x - 0.001, 0.0001);
                for s in 0..10 {
                    let t = a + s as f64 * h;
                    exact += h / 6.0 * (f(t) + 4.0 * f(t + h / 2.0) + f(t + h));
                }
            }
            let want = exact * 2.0 / std::f64::consts::PI.sqrt();
            for sign in [1.0, -1.0] {
                let e = (erf((sign * x) as f32) as f64 - sign * want).abs();
                worst = worst.max(e);
            }
        }
        assert!(worst < 4e-7, "worst error {worst}");
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(10.0), erf(4.0));
    }
}
