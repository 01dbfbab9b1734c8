//! The vector kernels (dot products of f32 vectors and of int8 codes), chosen at run time for
//! the CPU at hand, as ggml and simsimd do: AVX-512 (VNNI for int8) where the CPU has it, AVX2
//! otherwise, and the portable code everywhere else. One binary is fast on every machine and the
//! portable path is always there; `UMWELT_PERF=off` uses it.
//!
//! Every kernel gives the same answer, bit for bit, so the optimisations switch and the machine
//! never change a ranking:
//! - int8: the sum of products is an integer (exact whatever the order). Codes lie in
//!   -127..=127 ([`crate::store`]'s quantiser never makes -128), which the AVX2 and AVX-512
//!   kernels rely on (they multiply |a| by b with a's sign).
//! - f32: the products are summed in one fixed order, whatever the width: 32 lanes (lane `i`
//!   adds the products at `32·j + i`, multiply then add, no fused multiply-add), the lanes
//!   folded as [`fold`] does, then the tail (`len % 32`) in order. The portable kernel is that
//!   order written out; the wide ones keep 32 lanes in registers.

use std::sync::OnceLock;

/// Lanes of the f32 sum: its order is part of the answer.
const LANES: usize = 32;

/// One set of kernels.
#[derive(Clone, Copy)]
pub struct Kernels {
    /// What it uses: `avx512-vnni`, `avx2` or `portable`.
    pub name: &'static str,
    pub dot_f32: fn(&[f32], &[f32]) -> f32,
    /// For codes in -127..=127.
    pub dot_i8: fn(&[i8], &[i8]) -> i32,
    /// `dot_i8` of one query `q` with each of many rows laid end to end (`rows` holds
    /// `out.len()` rows of `q.len()` codes): `out[r] = dot_i8(q, row r)`. What is the query's
    /// alone (its magnitudes and signs) is worked out once, not once per row.
    pub dot_i8_rows: fn(&[i8], &[i8], &mut [i32]),
}

impl std::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The portable kernels: correct everywhere.
pub const PORTABLE: Kernels = Kernels {
    name: "portable",
    dot_f32: portable::dot_f32,
    dot_i8: portable::dot_i8,
    dot_i8_rows: portable::dot_i8_rows,
};

/// The kernels to use now: the fastest this CPU runs, or the portable ones with the
/// optimisations off.
pub fn current() -> &'static Kernels {
    if crate::optimisations::enabled() {
        fastest()
    } else {
        &PORTABLE
    }
}

/// The fastest kernels this CPU runs (looked up once).
pub fn fastest() -> &'static Kernels {
    static FASTEST: OnceLock<Kernels> = OnceLock::new();
    FASTEST.get_or_init(|| available().into_iter().next().unwrap_or(PORTABLE))
}

/// Every set of kernels this CPU runs, fastest first (the portable ones last).
pub fn available() -> Vec<Kernels> {
    let mut out = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_avx512() {
            out.push(x86::AVX512);
        }
        if x86::has_avx2() {
            out.push(x86::AVX2);
        }
    }
    out.push(PORTABLE);
    out
}

/// The kernels this build has that this CPU cannot run (a test says it skipped them).
pub fn unavailable() -> Vec<&'static str> {
    let mut out = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if !x86::has_avx512() {
            out.push(x86::AVX512.name);
        }
        if !x86::has_avx2() {
            out.push(x86::AVX2.name);
        }
    }
    out
}

/// Fold 32 lane sums into one, in the fixed order every kernel uses.
fn fold(l: &[f32; LANES]) -> f32 {
    let mut r = [0.0f32; 8];
    for i in 0..8 {
        r[i] = (l[i] + l[8 + i]) + (l[16 + i] + l[24 + i]);
    }
    ((r[0] + r[4]) + (r[2] + r[6])) + ((r[1] + r[5]) + (r[3] + r[7]))
}

/// The products past the last whole group of 32, in order.
fn tail_f32(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

mod portable {
    use super::{fold, tail_f32, LANES};

    pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let whole = n / LANES * LANES;
        let mut l = [0.0f32; LANES];
        for (ca, cb) in a[..whole]
            .chunks_exact(LANES)
            .zip(b[..whole].chunks_exact(LANES))
        {
            for i in 0..LANES {
                l[i] += ca[i] * cb[i];
            }
        }
        fold(&l) + tail_f32(&a[whole..n], &b[whole..n])
    }

    pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
        a.iter().zip(b).map(|(x, y)| *x as i32 * *y as i32).sum()
    }

    pub fn dot_i8_rows(q: &[i8], rows: &[i8], out: &mut [i32]) {
        assert!(rows.len() >= out.len() * q.len(), "fewer rows than answers");
        if q.is_empty() {
            out.fill(0);
            return;
        }
        for (o, row) in out.iter_mut().zip(rows.chunks_exact(q.len())) {
            *o = dot_i8(q, row);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{fold, tail_f32, Kernels, LANES};

    pub fn has_avx2() -> bool {
        is_x86_feature_detected!("avx2")
    }

    pub fn has_avx512() -> bool {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vnni")
    }

    // The safe wrappers below are only ever reached through these tables, and a table is only
    // handed out (by `available`) when the CPU reports its features.
    pub const AVX2: Kernels = Kernels {
        name: "avx2",
        dot_f32: |a, b| unsafe { dot_f32_avx2(a, b) },
        dot_i8: |a, b| unsafe { dot_i8_avx2(a, b) },
        dot_i8_rows: |q, rows, out| {
            assert!(rows.len() >= out.len() * q.len(), "fewer rows than answers");
            unsafe { dot_i8_rows_avx2(q, rows, out) }
        },
    };

    pub const AVX512: Kernels = Kernels {
        name: "avx512-vnni",
        dot_f32: |a, b| unsafe { dot_f32_avx512(a, b) },
        dot_i8: |a, b| unsafe { dot_i8_vnni(a, b) },
        dot_i8_rows: |q, rows, out| {
            assert!(rows.len() >= out.len() * q.len(), "fewer rows than answers");
            unsafe { dot_i8_rows_vnni(q, rows, out) }
        },
    };

    #[target_feature(enable = "avx2")]
    unsafe fn dot_f32_avx2(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let whole = n / LANES * LANES;
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        while i < whole {
            for (k, acc) in acc.iter_mut().enumerate() {
                let x = _mm256_loadu_ps(pa.add(i + 8 * k));
                let y = _mm256_loadu_ps(pb.add(i + 8 * k));
                *acc = _mm256_add_ps(*acc, _mm256_mul_ps(x, y));
            }
            i += LANES;
        }
        let mut l = [0.0f32; LANES];
        for (k, acc) in acc.iter().enumerate() {
            _mm256_storeu_ps(l.as_mut_ptr().add(8 * k), *acc);
        }
        fold(&l) + tail_f32(&a[whole..n], &b[whole..n])
    }

    /// |a| (unsigned) times b with a's sign, pairs summed to i16 (no saturation for codes in
    /// -127..=127: 2 · 127 · 127 < 2^15), then to i32.
    #[target_feature(enable = "avx2")]
    unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let ones = _mm256_set1_epi16(1);
        let mut acc = _mm256_setzero_si256();
        let mut i = 0;
        while i + 32 <= n {
            let x = _mm256_loadu_si256(pa.add(i) as *const __m256i);
            let y = _mm256_loadu_si256(pb.add(i) as *const __m256i);
            let pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(x), _mm256_sign_epi8(y, x));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
            i += 32;
        }
        let mut lanes = [0i32; 8];
        _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, acc);
        let mut s: i32 = lanes.iter().sum();
        while i < n {
            s += a[i] as i32 * b[i] as i32;
            i += 1;
        }
        s
    }

    /// [`dot_i8_avx2`] turned round for one query and many rows: |q| (unsigned) times the row
    /// with q's sign, so |q| is taken once. Caller: `rows` holds `out.len()` rows of `q.len()`.
    #[target_feature(enable = "avx2")]
    unsafe fn dot_i8_rows_avx2(q: &[i8], rows: &[i8], out: &mut [i32]) {
        let d = q.len();
        let whole = d / 32 * 32;
        let blocks: Vec<(__m256i, __m256i)> = (0..whole)
            .step_by(32)
            .map(|i| {
                let x = _mm256_loadu_si256(q.as_ptr().add(i) as *const __m256i);
                (_mm256_abs_epi8(x), x)
            })
            .collect();
        let ones = _mm256_set1_epi16(1);
        for (r, o) in out.iter_mut().enumerate() {
            let row = rows.as_ptr().add(r * d);
            let mut acc = _mm256_setzero_si256();
            for (k, (magnitude, sign)) in blocks.iter().enumerate() {
                let x = _mm256_loadu_si256(row.add(32 * k) as *const __m256i);
                let pairs = _mm256_maddubs_epi16(*magnitude, _mm256_sign_epi8(x, *sign));
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
            }
            let half = _mm_add_epi32(
                _mm256_castsi256_si128(acc),
                _mm256_extracti128_si256(acc, 1),
            );
            let half = _mm_add_epi32(half, _mm_shuffle_epi32(half, 0b01_00_11_10));
            let half = _mm_add_epi32(half, _mm_shuffle_epi32(half, 0b10_11_00_01));
            let mut s = _mm_cvtsi128_si32(half);
            for i in whole..d {
                s += q[i] as i32 * *row.add(i) as i32;
            }
            *o = s;
        }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn dot_f32_avx512(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let whole = n / LANES * LANES;
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut lo = _mm512_setzero_ps();
        let mut hi = _mm512_setzero_ps();
        let mut i = 0;
        while i < whole {
            let x = _mm512_loadu_ps(pa.add(i));
            let y = _mm512_loadu_ps(pb.add(i));
            lo = _mm512_add_ps(lo, _mm512_mul_ps(x, y));
            let x = _mm512_loadu_ps(pa.add(i + 16));
            let y = _mm512_loadu_ps(pb.add(i + 16));
            hi = _mm512_add_ps(hi, _mm512_mul_ps(x, y));
            i += LANES;
        }
        let mut l = [0.0f32; LANES];
        _mm512_storeu_ps(l.as_mut_ptr(), lo);
        _mm512_storeu_ps(l.as_mut_ptr().add(16), hi);
        fold(&l) + tail_f32(&a[whole..n], &b[whole..n])
    }

    /// `vpdpbusd` on |a| (unsigned) and b with a's sign: four products summed into each i32
    /// lane at once. The last partial block is read through a mask.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn dot_i8_vnni(a: &[i8], b: &[i8]) -> i32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let zero = _mm512_setzero_si512();
        let mut acc = _mm512_setzero_si512();
        let mut i = 0;
        while i < n {
            let left = n - i;
            let m: __mmask64 = if left >= 64 {
                u64::MAX
            } else {
                (1u64 << left) - 1
            };
            let x = _mm512_maskz_loadu_epi8(m, pa.add(i));
            let y = _mm512_maskz_loadu_epi8(m, pb.add(i));
            let negative = _mm512_movepi8_mask(x);
            let y = _mm512_mask_sub_epi8(y, negative, zero, y);
            acc = _mm512_dpbusd_epi32(acc, _mm512_abs_epi8(x), y);
            i += 64;
        }
        _mm512_reduce_add_epi32(acc)
    }

    /// [`dot_i8_vnni`] turned round for one query and many rows: |q| (unsigned) by the row
    /// with q's sign, so per 64 codes of a row there is one load, one masked negation and one
    /// `vpdpbusd`. Caller: `rows` holds `out.len()` rows of `q.len()`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn dot_i8_rows_vnni(q: &[i8], rows: &[i8], out: &mut [i32]) {
        let d = q.len();
        let zero = _mm512_setzero_si512();
        // Per block of 64: |q|, where q is negative, which lanes are in the row.
        let blocks: Vec<(__m512i, __mmask64, __mmask64)> = (0..d)
            .step_by(64)
            .map(|i| {
                let left = d - i;
                let m: __mmask64 = if left >= 64 {
                    u64::MAX
                } else {
                    (1u64 << left) - 1
                };
                let x = _mm512_maskz_loadu_epi8(m, q.as_ptr().add(i));
                (_mm512_abs_epi8(x), _mm512_movepi8_mask(x), m)
            })
            .collect();
        for (r, o) in out.iter_mut().enumerate() {
            let row = rows.as_ptr().add(r * d);
            let mut acc = zero;
            for (k, (magnitude, negative, m)) in blocks.iter().enumerate() {
                let x = _mm512_maskz_loadu_epi8(*m, row.add(64 * k));
                let x = _mm512_mask_sub_epi8(x, *negative, zero, x);
                acc = _mm512_dpbusd_epi32(acc, *magnitude, x);
            }
            *o = _mm512_reduce_add_epi32(acc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(n: usize, seed: u64) -> Vec<i8> {
        let mut r = crate::bench::Rng::new(seed);
        (0..n)
            .map(|_| ((r.next() % 255) as i32 - 127) as i8)
            .collect()
    }

    fn floats(n: usize, seed: u64) -> Vec<f32> {
        let mut r = crate::bench::Rng::new(seed);
        (0..n).map(|_| r.unit_f32() * 2.0 - 1.0).collect()
    }

    /// Every kernel this CPU runs agrees with the portable one, bit for bit, on every length
    /// from 0 to 300 and 384, at every alignment of both inputs; those it cannot run are named.
    #[test]
    fn every_kernel_agrees_with_the_portable_one_at_every_size_and_alignment() {
        let kernels = available();
        eprintln!(
            "kernels tested: {:?}; skipped on this CPU: {:?}",
            kernels,
            unavailable()
        );
        let (ca, cb, cr) = (codes(400, 1), codes(400, 2), codes(3 * 384 + 16, 7));
        let (fa, fb) = (floats(400, 3), floats(400, 4));
        // The extremes of the codes' range, where a kernel would saturate.
        let high = vec![127i8; 400];
        let low = vec![-127i8; 400];
        for k in &kernels {
            for len in (0..=300).chain([384]) {
                for (oa, ob) in [(0, 0), (1, 0), (0, 3), (5, 7), (13, 1)] {
                    let (a, b) = (&ca[oa..oa + len], &cb[ob..ob + len]);
                    assert_eq!((k.dot_i8)(a, b), portable::dot_i8(a, b), "{k:?} len {len}");
                    for (x, y) in [(&high, &high), (&high, &low), (&low, &low)] {
                        let (x, y) = (&x[oa..oa + len], &y[ob..ob + len]);
                        assert_eq!((k.dot_i8)(x, y), portable::dot_i8(x, y), "{k:?} len {len}");
                    }
                    // Three rows at once, the query at any alignment.
                    let (q, rows) = (&ca[oa..oa + len], &cr[ob..ob + 3 * len]);
                    let mut got = [0i32; 3];
                    (k.dot_i8_rows)(q, rows, &mut got);
                    let want: Vec<i32> = (0..3)
                        .map(|r| portable::dot_i8(q, &rows[r * q.len()..(r + 1) * q.len()]))
                        .collect();
                    assert_eq!(got.as_slice(), want.as_slice(), "{k:?} rows of {}", q.len());
                    let (a, b) = (&fa[oa..oa + len], &fb[ob..ob + len]);
                    let (got, want) = ((k.dot_f32)(a, b), portable::dot_f32(a, b));
                    assert_eq!(got.to_bits(), want.to_bits(), "{k:?} len {len}");
                }
            }
        }
    }

    #[test]
    fn the_portable_f32_kernel_is_a_dot_product() {
        for len in [0, 1, 31, 32, 33, 384] {
            let (a, b) = (floats(len, 5), floats(len, 6));
            let want: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum();
            assert!((portable::dot_f32(&a, &b) as f64 - want).abs() < 1e-4);
        }
    }
}
