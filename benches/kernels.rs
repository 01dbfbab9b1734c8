//! The vector kernels alone (`src/kernels.rs`), each one this CPU runs: one 384-dimension dot
//! product, a scan of 10 000 f32 rows, and the index's first pass over 10 000 rows of 4-bit
//! codes (10 000 and 100 000 rows), a block of rows at a time. `cargo bench --bench kernels`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use umwelt::bench::Rng;
use umwelt::kernels;

const DIM: usize = 384;
const ROWS: usize = 10_000;

fn bench(c: &mut Criterion) {
    let mut r = Rng::new(7);
    let f: Vec<f32> = (0..DIM * ROWS).map(|_| r.unit_f32()).collect();
    let q: Vec<f32> = (0..DIM).map(|_| r.unit_f32()).collect();
    let codes: Vec<i8> = f.iter().map(|x| (x * 127.0).round() as i8).collect();
    let qc: Vec<i8> = q.iter().map(|x| (x * 127.0).round() as i8).collect();
    eprintln!("skipped on this CPU: {:?}", kernels::unavailable());
    for k in kernels::available() {
        c.bench_function(&format!("dot_f32/{}", k.name), |b| {
            b.iter(|| (k.dot_f32)(black_box(&q), black_box(&f[..DIM])))
        });
        c.bench_function(&format!("scan_f32_10k/{}", k.name), |b| {
            b.iter(|| {
                f.chunks_exact(DIM)
                    .map(|row| (k.dot_f32)(&q, row))
                    .fold(f32::MIN, f32::max)
            })
        });
        let mut dots = vec![0i32; 256];
        // 4-bit codes, a block of 256 rows per call, as the index makes the first pass.
        let u4_row = kernels::u4_bytes(DIM);
        let c4: Vec<u8> = codes
            .iter()
            .map(|&c| ((c as i32 + 128) >> 4) as u8)
            .collect();
        let mut packed = Vec::with_capacity(ROWS * u4_row);
        for row in c4.chunks_exact(DIM) {
            kernels::pack_u4(row, &mut packed);
        }
        // The same rows ten times over (19 MB, out of the cores' own caches, as at 100 000).
        let large = packed.repeat(10);
        for (size, rows) in [("10k", &packed), ("100k", &large)] {
            c.bench_function(&format!("scan_u4_rows_{size}/{}", k.name), |b| {
                b.iter(|| {
                    rows.chunks(256 * u4_row)
                        .map(|block| {
                            let n = block.len() / u4_row;
                            k.dot_u4_rows(&qc, block, &mut dots[..n]);
                            dots[..n].iter().copied().max().unwrap_or(i32::MIN)
                        })
                        .max()
                })
            });
        }
        // 2 000 rows scattered over the 10 000, as a holder's claims are over the index: one
        // call per row (four rows' work for one answer) against one call for all of them.
        let picked: Vec<u32> = (0..2000u32).map(|i| (i * 7919) % ROWS as u32).collect();
        let mut out = vec![0i32; picked.len()];
        c.bench_function(&format!("u4_one_by_one_2000/{}", k.name), |b| {
            b.iter(|| {
                for (o, &r) in out.iter_mut().zip(&picked) {
                    let r = r as usize;
                    *o = k.dot_u4(&qc, &packed[r * u4_row..(r + 1) * u4_row]);
                }
                out[0]
            })
        });
        c.bench_function(&format!("u4_picked_2000/{}", k.name), |b| {
            b.iter(|| {
                k.dot_u4_picked(&qc, &packed, &picked, &mut out);
                out[0]
            })
        });
    }
}

/// The embedding model's matrix products (`src/embed/gemm.rs`), each kernel this CPU runs: the
/// feed-forward block's first product (384 → 1536) for one short text (16 rows, the least a
/// product takes) and for a batch (256 rows); and a whole text's 24 products (six layers of
/// weights, 10.6 MB, more than one core's caches), on one core and with the model's team.
fn gemm(c: &mut Criterion) {
    use umwelt::embed::gemm::{self, Operand, Packed};
    let mut r = Rng::new(11);
    let weights = |r: &mut Rng, k: usize, n: usize| {
        let q: Vec<i8> = (0..k * n).map(|_| (r.next() % 255) as i32 as i8).collect();
        Packed::new(&q, k, n)
    };
    let operand = |r: &mut Rng, m: usize, k: usize| {
        let x: Vec<f32> = (0..m * k).map(|_| r.unit_f32()).collect();
        let mut a = Operand::new(m, k);
        a.set(&x, k);
        a
    };
    let w = weights(&mut r, 384, 1536);
    eprintln!(
        "gemm kernels skipped on this CPU: {:?}",
        gemm::unavailable()
    );
    for g in gemm::available() {
        for m in [16, 256] {
            let a = operand(&mut r, m, 384);
            let mut out = vec![0f32; a.rows() * 1536];
            c.bench_function(&format!("gemm_384x1536_m{m}/{}", g.name), |b| {
                b.iter(|| g.run(black_box(&a), &w, &mut out))
            });
        }
    }
    let shapes = [(384, 1152), (384, 384), (384, 1536), (1536, 384)];
    let model: Vec<Packed> = (0..6)
        .flat_map(|_| shapes)
        .map(|(k, n)| weights(&mut r, k, n))
        .collect();
    let (narrow, wide) = (operand(&mut r, 16, 384), operand(&mut r, 16, 1536));
    let mut out = vec![0f32; 16 * 1536];
    let g = *gemm::fastest();
    let team = umwelt::embed::team::Team::start().unwrap();
    for (name, team) in [("1thread", None), ("team", Some(&team))] {
        c.bench_function(&format!("gemm_text_m16_{name}/{}", g.name), |b| {
            b.iter(|| {
                for w in &model {
                    let a = if w.k() == 384 { &narrow } else { &wide };
                    match team {
                        Some(t) => t.run(&g, a, w, &mut out),
                        None => g.run(a, w, &mut out),
                    }
                }
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).warm_up_time(std::time::Duration::from_millis(300)).measurement_time(std::time::Duration::from_secs(2));
    targets = bench, gemm
}
criterion_main!(benches);
