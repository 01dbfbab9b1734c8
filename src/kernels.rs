//! The vector kernels (dot products of f32 vectors, and of an int8 query with rows of 4-bit
//! codes), chosen at run time for the CPU at hand, as ggml and simsimd do: AVX-512 (VNNI for
//! the codes) where the CPU has it, AVX2 otherwise, and the portable code everywhere else. One
//! binary is fast on every machine and the portable path is always there; `UMWELT_PERF=off`
//! uses it.
//!
//! Every kernel gives the same answer, bit for bit, so the optimisations switch and the machine
//! never change a ranking:
//! - 4-bit codes: the sum of products is an integer (exact whatever the order). The codes are
//!   unsigned (0..=15) and the query signed (-127..=127), which are exactly the operands of
//!   `vpdpbusd` and `vpmaddubsw`, so no kernel needs a sign trick; a pair of products,
//!   `2 · 15 · 127`, cannot saturate an i16.
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
    /// The instructions it needs ([`crate::cpu`]).
    pub needs: crate::cpu::Level,
    pub dot_f32: fn(&[f32], &[f32]) -> f32,
    /// [`Kernels::dot_u4_rows`] once its lengths are checked (the wide kernels rely on them).
    u4_rows: fn(&[i8], &[u8], &mut [i32]),
    /// [`Kernels::dot_u4_picked`] once its rows are checked.
    u4_picked: fn(&[i8], &[u8], &[u32], &mut [i32]),
}

impl Kernels {
    /// `Σ q[i] · c[i]` of an int8 query `q` and a row of 4-bit codes `c` (0..=15) packed as
    /// [`pack_u4`] lays them out ([`u4_bytes`]`(q.len())` bytes).
    pub fn dot_u4(&self, q: &[i8], row: &[u8]) -> i32 {
        let mut out = [0];
        self.dot_u4_rows(q, row, &mut out);
        out[0]
    }

    /// `dot_u4` of one query with each of many packed rows laid end to end (`rows` holds
    /// `out.len()` rows of `u4_bytes(q.len())` bytes); rows are taken four at a time.
    pub fn dot_u4_rows(&self, q: &[i8], rows: &[u8], out: &mut [i32]) {
        assert!(
            rows.len() >= out.len() * u4_bytes(q.len()),
            "fewer rows than answers"
        );
        (self.u4_rows)(q, rows, out)
    }

    /// `dot_u4` of one query with the rows `picked` of a table of packed rows (`out[j]` is row
    /// `picked[j]`'s): the rows a first pass kept, scattered over the table.
    pub fn dot_u4_picked(&self, q: &[i8], table: &[u8], picked: &[u32], out: &mut [i32]) {
        let rb = u4_bytes(q.len());
        assert!(
            picked.len() == out.len()
                && picked.iter().all(|&r| (r as usize + 1) * rb <= table.len()),
            "a picked row outside the table"
        );
        (self.u4_picked)(q, table, picked, out)
    }
}

/// Ask for the cache lines of `data` ahead of their use (a hint: nothing where the CPU has no
/// such instruction).
#[inline]
pub fn prefetch<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        let (p, bytes) = (data.as_ptr() as *const i8, std::mem::size_of_val(data));
        for line in (0..bytes).step_by(64) {
            // SAFETY: a prefetch reads nothing and cannot fault; the address is inside `data`.
            unsafe { std::arch::x86_64::_mm_prefetch(p.add(line), std::arch::x86_64::_MM_HINT_T0) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// Bytes of `n` 4-bit codes packed.
pub const fn u4_bytes(n: usize) -> usize {
    n.div_ceil(2)
}

/// Dimensions per packed block of 4-bit codes: 64 bytes, code `j` in the low nibble of byte `j`
/// and code `64 + j` in its high nibble, so one mask and one shift give two runs of 64 codes in
/// the query's order (AVX2 reads a block as two halves of 32).
const U4_BLOCK: usize = 128;

/// Pack `codes` (each 0..=15) into `out`: whole blocks of [`U4_BLOCK`] as that constant says,
/// then the rest two to a byte in order (low nibble first).
pub fn pack_u4(codes: &[u8], out: &mut Vec<u8>) {
    debug_assert!(codes.iter().all(|&c| c < 16));
    let whole = codes.len() / U4_BLOCK * U4_BLOCK;
    for block in codes[..whole].chunks_exact(U4_BLOCK) {
        let (lo, hi) = block.split_at(U4_BLOCK / 2);
        out.extend(lo.iter().zip(hi).map(|(l, h)| l | h << 4));
    }
    out.extend(
        codes[whole..]
            .chunks(2)
            .map(|p| p[0] | p.get(1).copied().unwrap_or(0) << 4),
    );
}

impl std::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The portable kernels: correct everywhere.
pub const PORTABLE: Kernels = Kernels {
    name: "portable",
    needs: crate::cpu::Level::Portable,
    dot_f32: portable::dot_f32,
    u4_rows: portable::dot_u4_rows,
    u4_picked: portable::dot_u4_picked,
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
    use super::{fold, tail_f32, tail_u4, u4_bytes, LANES, U4_BLOCK};

    pub(super) fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
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

    pub(super) fn dot_u4(q: &[i8], row: &[u8]) -> i32 {
        let whole = q.len() / U4_BLOCK * U4_BLOCK;
        let mut s = 0;
        for (qb, rb) in q[..whole]
            .chunks_exact(U4_BLOCK)
            .zip(row.chunks_exact(U4_BLOCK / 2))
        {
            let (lo, hi) = qb.split_at(U4_BLOCK / 2);
            for ((&l, &h), &b) in lo.iter().zip(hi).zip(rb) {
                s += l as i32 * (b & 15) as i32 + h as i32 * (b >> 4) as i32;
            }
        }
        s + tail_u4(&q[whole..], &row[whole / 2..])
    }

    pub(super) fn dot_u4_rows(q: &[i8], rows: &[u8], out: &mut [i32]) {
        let rb = u4_bytes(q.len());
        for (r, o) in out.iter_mut().enumerate() {
            *o = dot_u4(q, &rows[r * rb..(r + 1) * rb]);
        }
    }

    pub(super) fn dot_u4_picked(q: &[i8], table: &[u8], picked: &[u32], out: &mut [i32]) {
        let rb = u4_bytes(q.len());
        for (&r, o) in picked.iter().zip(out) {
            let r = r as usize;
            *o = dot_u4(q, &table[r * rb..(r + 1) * rb]);
        }
    }
}

/// The codes past the last whole block: two to a byte, in order.
fn tail_u4(q: &[i8], packed: &[u8]) -> i32 {
    q.chunks(2)
        .zip(packed)
        .map(|(p, &b)| {
            p[0] as i32 * (b & 15) as i32 + p.get(1).map_or(0, |&h| h as i32 * (b >> 4) as i32)
        })
        .sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{fold, tail_f32, tail_u4, u4_bytes, Kernels, LANES, U4_BLOCK};

    pub(super) fn has_avx2() -> bool {
        crate::cpu::supports(AVX2.needs)
    }

    pub(super) fn has_avx512() -> bool {
        crate::cpu::supports(AVX512.needs)
    }

    // The safe wrappers below are only ever reached through these tables, a table is only
    // handed out (by `available`) when the CPU reports its features, and the row kernels only
    // through `Kernels::dot_u4_rows` and `dot_u4_picked`, which check the
    // lengths and rows the kernels read by.
    pub(super) const AVX2: Kernels = Kernels {
        name: "avx2",
        needs: crate::cpu::Level::Avx2,
        dot_f32: |a, b| unsafe { dot_f32_avx2(a, b) },
        u4_rows: |q, rows, out| unsafe { dot_u4_rows_avx2(q, rows, |r| r, out) },
        u4_picked: |q, table, picked, out| unsafe {
            dot_u4_rows_avx2(q, table, |r| picked[r] as usize, out)
        },
    };

    pub(super) const AVX512: Kernels = Kernels {
        name: "avx512-vnni",
        needs: crate::cpu::Level::Avx512Vnni,
        dot_f32: |a, b| unsafe { dot_f32_avx512(a, b) },
        u4_rows: |q, rows, out| unsafe { dot_u4_rows_vnni(q, rows, |r| r, out) },
        u4_picked: |q, table, picked, out| unsafe {
            dot_u4_rows_vnni(q, table, |r| picked[r] as usize, out)
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

    /// The four sums of four accumulators of eight lanes each.
    #[target_feature(enable = "avx2")]
    unsafe fn sum4(acc: [__m256i; 4]) -> __m128i {
        let a = _mm256_hadd_epi32(acc[0], acc[1]);
        let b = _mm256_hadd_epi32(acc[2], acc[3]);
        let c = _mm256_hadd_epi32(a, b);
        _mm_add_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1))
    }

    /// Four rows of 4-bit codes at a time (four independent sums, so no row waits on another's
    /// additions): per 32 bytes of a row, one load, a mask and a shift give 64 codes, which
    /// `maddubs` multiplies by the query (codes unsigned, query signed: exactly its operands;
    /// `2 · 15 · 127` per pair cannot saturate) and `madd` widens to i32. Rows left over, and
    /// codes past the last whole block, go as in the portable kernel.
    #[target_feature(enable = "avx2")]
    unsafe fn dot_u4_rows_avx2(
        q: &[i8],
        rows: &[u8],
        at: impl Fn(usize) -> usize,
        out: &mut [i32],
    ) {
        let d = q.len();
        let (blocks, rb) = (d / U4_BLOCK, u4_bytes(d));
        let whole = blocks * U4_BLOCK;
        let nibble = _mm256_set1_epi8(0x0F);
        let ones = _mm256_set1_epi16(1);
        let qp = q.as_ptr();
        for (r, out) in (0..).step_by(4).zip(out.chunks_mut(4)) {
            let row = four_rows(rows, rb, r, out.len(), &at);
            let mut acc = [_mm256_setzero_si256(); 4];
            for b in 0..blocks {
                for h in 0..2 {
                    let ql = _mm256_loadu_si256(qp.add(b * U4_BLOCK + 32 * h) as *const __m256i);
                    let qh =
                        _mm256_loadu_si256(qp.add(b * U4_BLOCK + 64 + 32 * h) as *const __m256i);
                    for (row, acc) in row.iter().zip(acc.iter_mut()) {
                        let x = _mm256_loadu_si256(row.add(b * 64 + 32 * h) as *const __m256i);
                        let lo = _mm256_and_si256(x, nibble);
                        let hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nibble);
                        let pairs = _mm256_add_epi16(
                            _mm256_maddubs_epi16(lo, ql),
                            _mm256_maddubs_epi16(hi, qh),
                        );
                        *acc = _mm256_add_epi32(*acc, _mm256_madd_epi16(pairs, ones));
                    }
                }
            }
            finish_u4(q, whole, rb, &row, sum4(acc), out);
        }
    }

    /// [`dot_u4_rows_avx2`] 64 bytes at a time: per block of 128 codes of a row, one load, a
    /// mask and a shift, and two `vpdpbusd` (codes unsigned, query signed: its operands as they
    /// are, no sign trick); the query's blocks are loaded once.
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vnni")]
    unsafe fn dot_u4_rows_vnni(
        q: &[i8],
        rows: &[u8],
        at: impl Fn(usize) -> usize,
        out: &mut [i32],
    ) {
        let d = q.len();
        let (blocks, rb) = (d / U4_BLOCK, u4_bytes(d));
        let whole = blocks * U4_BLOCK;
        let nibble = _mm512_set1_epi8(0x0F);
        let qb: Vec<(__m512i, __m512i)> = (0..blocks)
            .map(|b| {
                let p = q.as_ptr().add(b * U4_BLOCK);
                (
                    _mm512_loadu_si512(p as *const _),
                    _mm512_loadu_si512(p.add(64) as *const _),
                )
            })
            .collect();
        for (r, out) in (0..).step_by(4).zip(out.chunks_mut(4)) {
            let row = four_rows(rows, rb, r, out.len(), &at);
            let mut acc = [_mm512_setzero_si512(); 4];
            for (b, (ql, qh)) in qb.iter().enumerate() {
                for (row, acc) in row.iter().zip(acc.iter_mut()) {
                    let x = _mm512_loadu_si512(row.add(b * 64) as *const _);
                    let lo = _mm512_and_si512(x, nibble);
                    let hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), nibble);
                    *acc = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(*acc, lo, *ql), hi, *qh);
                }
            }
            let halves = acc.map(|a| {
                _mm256_add_epi32(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1))
            });
            finish_u4(q, whole, rb, &row, sum4(halves), out);
        }
    }

    /// Where the rows `at(r)..at(r + n)` (n ≤ 4) of `rows` start, `rb` bytes a row; past the
    /// last, the first again (its answer is computed and dropped, so a short group costs no
    /// second loop). Unchecked: the public entries have checked that every row `at` gives is
    /// inside `rows` (a check per group here cost as much as scoring the group).
    #[inline(always)]
    unsafe fn four_rows(
        rows: &[u8],
        rb: usize,
        r: usize,
        n: usize,
        at: impl Fn(usize) -> usize,
    ) -> [*const u8; 4] {
        std::array::from_fn(|i| rows.as_ptr().add(at(r + if i < n { i } else { 0 }) * rb))
    }

    /// Write the first `out.len()` of the four block sums, each with its row's codes past the
    /// last whole block.
    #[inline(always)]
    unsafe fn finish_u4(
        q: &[i8],
        whole: usize,
        rb: usize,
        row: &[*const u8; 4],
        sums: __m128i,
        out: &mut [i32],
    ) {
        let mut s = [0i32; 4];
        _mm_storeu_si128(s.as_mut_ptr() as *mut __m128i, sums);
        for ((o, s), &row) in out.iter_mut().zip(s).zip(row) {
            *o = s;
            if whole < q.len() {
                let tail = std::slice::from_raw_parts(row.add(whole / 2), rb - whole / 2);
                *o += tail_u4(&q[whole..], tail);
            }
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

    /// Every kernel this CPU runs agrees with the portable one (the 4-bit ones with the plain
    /// sum), bit for bit, on every length from 0 to 300 and 384, at every alignment of both
    /// inputs; those it cannot run are named.
    #[test]
    fn every_kernel_agrees_with_the_portable_one_at_every_size_and_alignment() {
        let kernels = available();
        eprintln!(
            "kernels tested: {:?}; skipped on this CPU: {:?}",
            kernels,
            unavailable()
        );
        let ca = codes(400, 1);
        let (fa, fb) = (floats(400, 3), floats(400, 4));
        // The extremes of the query's range, where a kernel would saturate.
        let high = vec![127i8; 400];
        let low = vec![-127i8; 400];
        for k in &kernels {
            for len in (0..=300).chain([384]) {
                for (oa, ob) in [(0, 0), (1, 0), (0, 3), (5, 7), (13, 1)] {
                    check_u4(k, &ca[oa..oa + len], ob, 7 * len as u64 + ob as u64);
                    check_u4(k, &high[oa..oa + len], ob, 0);
                    check_u4(k, &low[oa..oa + len], ob, 0);
                    let (a, b) = (&fa[oa..oa + len], &fb[ob..ob + len]);
                    let (got, want) = ((k.dot_f32)(a, b), portable::dot_f32(a, b));
                    assert_eq!(got.to_bits(), want.to_bits(), "{k:?} len {len}");
                }
            }
        }
    }

    /// `k`'s 4-bit kernels against the plain sum `Σ q·c` over the unpacked codes: one row, and
    /// five rows at once (a group of four and one left over), the rows `offset` bytes into their
    /// buffer; `seed` 0 gives every code 15 (the largest products).
    fn check_u4(k: &Kernels, q: &[i8], offset: usize, seed: u64) {
        let mut r = crate::bench::Rng::new(seed);
        let rows: Vec<Vec<u8>> = (0..5)
            .map(|_| {
                q.iter()
                    .map(|_| if seed == 0 { 15 } else { (r.next() % 16) as u8 })
                    .collect()
            })
            .collect();
        let mut packed = vec![0xA5u8; offset];
        for row in &rows {
            pack_u4(row, &mut packed);
        }
        let packed = &packed[offset..];
        assert_eq!(packed.len(), 5 * u4_bytes(q.len()));
        let want: Vec<i32> = rows
            .iter()
            .map(|c| q.iter().zip(c).map(|(&q, &c)| q as i32 * c as i32).sum())
            .collect();
        let one = k.dot_u4(q, &packed[..u4_bytes(q.len())]);
        assert_eq!(one, want[0], "{k:?} u4 len {}", q.len());
        let mut got = [0i32; 5];
        k.dot_u4_rows(q, packed, &mut got);
        assert_eq!(
            got.as_slice(),
            want.as_slice(),
            "{k:?} u4 rows of {}",
            q.len()
        );
        // The same rows picked out of order, one twice, five of them (a group and one over).
        let picked = [4u32, 0, 2, 2, 3];
        let mut got = [0i32; 5];
        k.dot_u4_picked(q, packed, &picked, &mut got);
        let want_picked: Vec<i32> = picked.iter().map(|&r| want[r as usize]).collect();
        assert_eq!(
            got.as_slice(),
            want_picked,
            "{k:?} u4 picked of {}",
            q.len()
        );
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
