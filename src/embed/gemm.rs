//! The embedding model's matrix products, `C = A · W`, chosen at run time for the CPU at hand:
//! AMX tiles where the CPU has them (Intel Xeon from Sapphire Rapids on), AVX-512 VNNI
//! (`vpdpbusd`: Zen 4 and 5, Ice Lake and later Xeons), AVX2, and the portable code everywhere
//! else. Every kernel gives the same answer, bit for bit: the sums are of whole numbers.
//!
//! The operands:
//! - `W` is the model file's int8 weights as they are, one byte each (a scale per column, which
//!   the caller applies: the file's own `W = q · scale` factored out of the sum). A short text
//!   uses each weight 16 times, so its products wait on reading the 10.6 MB of weights; as
//!   bytes they are read once, and no kernel widens them.
//! - `A`, the activations, row by row as two int8 digits of a 16-bit fixed-point number: with
//!   `s = max |x| / 127` for the row, `x ≈ s · (h + l / 254)`, `h = round(x / s)` and
//!   `l = round((x / s − h) · 254)` ([`Operand::set`]). The error is at most `max |x| / 64 516`,
//!   a row's largest value to 16 bits; against the model computed in f32 the sentence vectors
//!   agree to within 2·10⁻⁷ in cosine (`tests/it/embed.rs`; bf16 activations, tried first,
//!   gave 6·10⁻⁶).
//! - `C = s · (Σ h·q + Σ l·q / 254)`: both sums exact in i32 (at most 1536 · 127 · 127), then
//!   the same f32 operations in every kernel ([`combine`]).
//!
//! Layouts: `A` is [`ROWS`]-row tiles of `k` digits. `W` is packed by [`Packed::new`] in blocks
//! of 16 columns, each block `k / 4` rows of 16 columns × 4 consecutive weights — one AVX-512
//! register for `vpdpbusd`, or one row of an AMX tile for `tdpbssd`. `C` is row-major f32.

use std::ops::Range;
use std::sync::OnceLock;

/// Rows of `A` are taken in multiples of this (one AMX tile).
pub const ROWS: usize = 16;
/// Columns of a packed block.
const BLOCK: usize = 16;
/// `k` must be a multiple of this (an AMX tile is 64 int8 deep); `n` of [`ALIGN_N`] (two
/// blocks at a time).
pub const ALIGN_K: usize = 64;
pub const ALIGN_N: usize = 32;
/// The low digit's weight: `x ≈ s · (h + l / LOW)`.
const LOW: f32 = 254.0;

/// `m` rounded up to whole [`ROWS`].
pub const fn padded_rows(m: usize) -> usize {
    m.div_ceil(ROWS) * ROWS
}

/// Numbers for which all-zero bits are zero (so a zeroed line holds zeros).
pub trait Zeroed: Copy + sealed::Sealed {}
impl Zeroed for i8 {}
impl Zeroed for i32 {}
impl Zeroed for f32 {}
mod sealed {
    pub trait Sealed {}
    impl Sealed for i8 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// `len` numbers starting on a cache line: an AMX tile's rows and the wide kernels' loads
/// then never straddle two lines.
pub struct Aligned<T: Zeroed> {
    lines: Vec<Line>,
    len: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T: Zeroed> Aligned<T> {
    /// `len` zeros.
    pub fn zeroed(len: usize) -> Aligned<T> {
        let bytes = len * std::mem::size_of::<T>();
        Aligned {
            lines: vec![Line([0; 64]); bytes.div_ceil(64)],
            len,
            _t: std::marker::PhantomData,
        }
    }
}

impl<T: Zeroed> std::ops::Deref for Aligned<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the lines hold at least `len` values of `T` (a `Zeroed` type: any bits the
        // program wrote, or zero, are a valid value), and a line's alignment is a multiple of T's.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr() as *const T, self.len) }
    }
}

impl<T: Zeroed> std::ops::DerefMut for Aligned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`, and the borrow is unique.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr() as *mut T, self.len) }
    }
}

/// The left operand: rows of activations as two digits each, and each row's scale.
pub struct Operand {
    /// Rows, a multiple of [`ROWS`] (the rest of the last tile zero).
    rows: usize,
    k: usize,
    high: Aligned<i8>,
    low: Aligned<i8>,
    scale: Vec<f32>,
}

impl Operand {
    /// Room for `rows` rows (rounded up to whole tiles) of up to `k` values.
    pub fn new(rows: usize, k: usize) -> Operand {
        let rows = padded_rows(rows);
        Operand {
            rows,
            k,
            high: Aligned::zeroed(rows * k),
            low: Aligned::zeroed(rows * k),
            scale: vec![0.0; rows],
        }
    }

    /// The rows of `x` (row-major, `k` wide, at most the room made) as digits: row `r`'s
    /// `s = max |x| / 127`, `h = round(x / s)`, `l = round((x / s − h) · 254)`. A row of zeros
    /// (or the padding) has scale 0.
    #[inline(always)]
    pub fn set(&mut self, x: &[f32], k: usize) {
        let m = x.len() / k;
        assert!(
            x.len() == m * k && m <= self.rows && self.high.len() >= self.rows * k,
            "{m} rows of {k} do not fit"
        );
        // The padding rows, at this width, are zero.
        self.k = k;
        self.high[m * k..self.rows * k].fill(0);
        self.low[m * k..self.rows * k].fill(0);
        for (r, row) in x.chunks_exact(k).enumerate() {
            // The largest magnitude, sixteen lanes at a time (a maximum is exact in any order).
            let mut lanes = [0f32; 16];
            for chunk in row.chunks_exact(16) {
                for i in 0..16 {
                    lanes[i] = lanes[i].max(chunk[i].abs());
                }
            }
            for (i, &v) in row.chunks_exact(16).remainder().iter().enumerate() {
                lanes[i] = lanes[i].max(v.abs());
            }
            let max = lanes.iter().fold(0f32, |m, &v| m.max(v));
            let (high, low) = (
                &mut self.high[r * k..(r + 1) * k],
                &mut self.low[r * k..(r + 1) * k],
            );
            // A NaN or an infinity (never from the model's own weights) makes the row NaN, as
            // f32 arithmetic would; the conversion below needs finite values.
            let finite = row.iter().fold(true, |ok, v| ok & v.is_finite());
            if max == 0.0 || !finite {
                high.fill(0);
                low.fill(0);
                self.scale[r] = if finite { 0.0 } else { f32::NAN };
                continue;
            }
            let inv = 127.0 / max;
            for ((h, l), &v) in high.iter_mut().zip(low.iter_mut()).zip(row) {
                // Both in [-127, 127] by construction; clamped so the conversion below, which
                // vectorises where a saturating `as` does not, is always in range.
                let t = (v * inv).clamp(-127.0, 127.0);
                let hr = t.round_ties_even();
                let lr = ((t - hr) * LOW).round_ties_even().clamp(-127.0, 127.0);
                // SAFETY: finite (the row is) and within i32 (clamped above).
                unsafe {
                    *h = hr.to_int_unchecked::<i32>() as i8;
                    *l = lr.to_int_unchecked::<i32>() as i8;
                }
            }
            self.scale[r] = max / 127.0;
        }
        self.scale[m..].fill(0.0);
    }

    /// Rows (whole tiles).
    pub fn rows(&self) -> usize {
        self.rows
    }
}

/// One output: `s · (Σ h·q + Σ l·q / 254)`, the same f32 operations in every kernel.
#[inline(always)]
fn combine(high: i32, low: i32, scale: f32) -> f32 {
    (high as f32 + low as f32 * (1.0 / LOW)) * scale
}

/// A weight matrix of whole numbers, `k` rows by `n` columns, packed for the kernels.
pub struct Packed {
    k: usize,
    n: usize,
    data: Aligned<i8>,
    /// `128 · Σ_k q[k][c]` per column: what `vpdpbusd`'s unsigned digits (`d + 128`) add.
    offset: Vec<i32>,
}

impl Packed {
    /// Pack `q`, row-major `k × n` (`q[r * n + c]` is row `r`, column `c`).
    pub fn new(q: &[i8], k: usize, n: usize) -> Packed {
        assert!(
            k.is_multiple_of(ALIGN_K) && n.is_multiple_of(ALIGN_N) && q.len() == k * n,
            "a {k} x {n} matrix cannot be packed from {} values",
            q.len()
        );
        let mut data = Aligned::<i8>::zeroed(k * n);
        for block in 0..n / BLOCK {
            for quad in 0..k / 4 {
                let at = (block * (k / 4) + quad) * 4 * BLOCK;
                for c in 0..BLOCK {
                    for i in 0..4 {
                        data[at + 4 * c + i] = q[(4 * quad + i) * n + block * BLOCK + c];
                    }
                }
            }
        }
        let offset = (0..n)
            .map(|c| 128 * (0..k).map(|r| q[r * n + c] as i32).sum::<i32>())
            .collect();
        Packed { k, n, data, offset }
    }

    pub fn k(&self) -> usize {
        self.k
    }

    pub fn n(&self) -> usize {
        self.n
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.data.len() + self.offset.len() * 4
    }

    /// Block `b`'s packed weights.
    fn block(&self, b: usize) -> &[i8] {
        &self.data[b * self.k * BLOCK..(b + 1) * self.k * BLOCK]
    }
}

/// One set of kernels.
#[derive(Clone, Copy)]
pub struct Gemm {
    /// What it uses: `amx-int8`, `avx512-vnni`, `avx2` or `portable`.
    pub name: &'static str,
    /// The instructions it needs ([`crate::cpu`]).
    pub needs: crate::cpu::Level,
    /// The product for the column blocks `blocks` (an even start and end), once
    /// [`Gemm::run_blocks`] has checked the lengths (the wide kernels rely on them).
    run: unsafe fn(a: &Operand, w: &Packed, c: *mut f32, blocks: Range<usize>),
}

impl Gemm {
    /// `C = A · W` for all of `a`'s rows: `c` receives `a.rows() · w.n()` f32.
    pub fn run(&self, a: &Operand, w: &Packed, c: &mut [f32]) {
        // SAFETY: `c` is borrowed whole, for this call alone.
        unsafe { self.run_blocks(a, w, c.as_mut_ptr(), c.len(), 0..w.n / BLOCK) }
    }

    /// Column blocks `blocks` (16 columns each; an even start and end) of `C = A · W` into `c`,
    /// which holds `c_len` f32 (`a.rows() · w.n()` at least): the rest of `c` is not touched,
    /// so two threads can each make their own columns of one product.
    ///
    /// # Safety
    /// `c` must be valid for writes of `c_len` f32, and no one else may read or write the
    /// columns `blocks` of its rows during the call.
    pub unsafe fn run_blocks(
        &self,
        a: &Operand,
        w: &Packed,
        c: *mut f32,
        c_len: usize,
        blocks: Range<usize>,
    ) {
        assert!(
            a.k == w.k && c_len >= a.rows * w.n,
            "a {}-row, {}-wide product with a {} x {} matrix needs more room",
            a.rows,
            a.k,
            w.k,
            w.n
        );
        assert!(
            blocks.start.is_multiple_of(2)
                && blocks.end.is_multiple_of(2)
                && blocks.end <= w.n / BLOCK,
            "column blocks {blocks:?} of a {}-column matrix",
            w.n
        );
        // SAFETY: the lengths the kernels index by are checked above, `Packed::new` checked
        // the shape, a table is only handed out when the CPU runs its instructions, and the
        // caller answers for `c`.
        unsafe { (self.run)(a, w, c, blocks) }
    }

    /// Column blocks in a matrix of `n` columns.
    pub const fn blocks(n: usize) -> usize {
        n / BLOCK
    }
}

impl std::fmt::Debug for Gemm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The portable kernel: correct everywhere.
pub const PORTABLE: Gemm = Gemm {
    name: "portable",
    needs: crate::cpu::Level::Portable,
    run: portable,
};

/// The fastest kernel this CPU runs (looked up once).
pub fn fastest() -> &'static Gemm {
    static FASTEST: OnceLock<Gemm> = OnceLock::new();
    FASTEST.get_or_init(|| available().into_iter().next().unwrap_or(PORTABLE))
}

/// Every kernel this CPU runs, fastest first (the portable one last).
pub fn available() -> Vec<Gemm> {
    let mut out = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_amx() {
            out.push(x86::AMX);
        }
        if x86::has_vnni() {
            out.push(x86::VNNI);
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
        if !x86::has_amx() {
            out.push(x86::AMX.name);
        }
        if !x86::has_vnni() {
            out.push(x86::VNNI.name);
        }
        if !x86::has_avx2() {
            out.push(x86::AVX2.name);
        }
    }
    out
}

/// Both digits' sums for one row and one block, in i32.
unsafe fn portable(a: &Operand, w: &Packed, c: *mut f32, blocks: Range<usize>) {
    let (k, n) = (w.k, w.n);
    for r in 0..a.rows {
        let (high, low) = (&a.high[r * k..(r + 1) * k], &a.low[r * k..(r + 1) * k]);
        for block in blocks.clone() {
            let wb = w.block(block);
            let (mut sh, mut sl) = ([0i32; BLOCK], [0i32; BLOCK]);
            for ((h4, l4), w4) in high
                .chunks_exact(4)
                .zip(low.chunks_exact(4))
                .zip(wb.chunks_exact(4 * BLOCK))
            {
                for col in 0..BLOCK {
                    for i in 0..4 {
                        let q = w4[4 * col + i] as i32;
                        sh[col] += h4[i] as i32 * q;
                        sl[col] += l4[i] as i32 * q;
                    }
                }
            }
            for col in 0..BLOCK {
                // SAFETY: inside `a.rows` rows (the caller checked `c`'s length), in a block
                // of columns the caller gave this call.
                unsafe {
                    *c.add(r * n + block * BLOCK + col) = combine(sh[col], sl[col], a.scale[r])
                };
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::asm;
    use std::arch::x86_64::*;
    use std::ops::Range;

    use super::{combine, Gemm, Operand, Packed, BLOCK, ROWS};

    pub(super) fn has_avx2() -> bool {
        crate::cpu::supports(AVX2.needs)
    }

    pub(super) fn has_vnni() -> bool {
        crate::cpu::supports(VNNI.needs)
    }

    pub(super) fn has_amx() -> bool {
        crate::cpu::supports(AMX.needs)
    }

    pub(super) const AVX2: Gemm = Gemm {
        name: "avx2",
        needs: crate::cpu::Level::Avx2,
        run: gemm_avx2,
    };

    pub(super) const VNNI: Gemm = Gemm {
        name: "avx512-vnni",
        needs: crate::cpu::Level::Avx512Vnni,
        run: gemm_vnni,
    };

    pub(super) const AMX: Gemm = Gemm {
        name: "amx-int8",
        needs: crate::cpu::Level::AmxInt8,
        run: gemm_amx,
    };

    // ---- AVX2: weights and digits widened to i16, `vpmaddwd` (exact: a pair of products of
    // two int8 is far from an i32's limit). A register holds four columns' quads as two i32
    // lanes each (weights 0–1 and 2–3 of the quad); the lanes of a column are added at the end.

    #[target_feature(enable = "avx2")]
    unsafe fn gemm_avx2(a: &Operand, w: &Packed, c: *mut f32, blocks: Range<usize>) {
        let (k, n) = (w.k, w.n);
        for block in blocks {
            let wb = w.block(block).as_ptr();
            for r in 0..a.rows {
                let (h, l) = (a.high.as_ptr().add(r * k), a.low.as_ptr().add(r * k));
                let mut acc_h = [_mm256_setzero_si256(); 4];
                let mut acc_l = [_mm256_setzero_si256(); 4];
                for quad in 0..k / 4 {
                    let wq = wb.add(quad * 4 * BLOCK) as *const __m128i;
                    let dh = _mm256_cvtepi8_epi16(_mm_set1_epi32(
                        (h.add(4 * quad) as *const i32).read_unaligned(),
                    ));
                    let dl = _mm256_cvtepi8_epi16(_mm_set1_epi32(
                        (l.add(4 * quad) as *const i32).read_unaligned(),
                    ));
                    for g in 0..4 {
                        let wv = _mm256_cvtepi8_epi16(_mm_loadu_si128(wq.add(g)));
                        acc_h[g] = _mm256_add_epi32(acc_h[g], _mm256_madd_epi16(wv, dh));
                        acc_l[g] = _mm256_add_epi32(acc_l[g], _mm256_madd_epi16(wv, dl));
                    }
                }
                let mut sh = [0i32; 32];
                let mut sl = [0i32; 32];
                for g in 0..4 {
                    _mm256_storeu_si256(sh.as_mut_ptr().add(8 * g) as *mut __m256i, acc_h[g]);
                    _mm256_storeu_si256(sl.as_mut_ptr().add(8 * g) as *mut __m256i, acc_l[g]);
                }
                for col in 0..BLOCK {
                    *c.add(r * n + block * BLOCK + col) = combine(
                        sh[2 * col] + sh[2 * col + 1],
                        sl[2 * col] + sl[2 * col + 1],
                        a.scale[r],
                    );
                }
            }
        }
    }

    // ---- AVX-512 VNNI: `vpdpbusd` takes unsigned bytes on one side, so the digits go in as
    // `d + 128` (`d ^ 0x80`) and `128 · Σ q` comes off each column after. Three rows by four
    // blocks (sixty-four columns), both digits: 24 sums in registers.

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn gemm_vnni(a: &Operand, w: &Packed, c: *mut f32, blocks: Range<usize>) {
        let mut block = blocks.start;
        while block < blocks.end {
            let nb = (blocks.end - block).min(4);
            let mut r = 0;
            while r < a.rows {
                let rows = (a.rows - r).min(3);
                match (rows, nb) {
                    (3, 4) => micro_vnni::<3, 4>(a, w, c, r, block),
                    (1, 4) => micro_vnni::<1, 4>(a, w, c, r, block),
                    (rows, nb) => {
                        for i in 0..rows {
                            for t in (0..nb).step_by(2) {
                                micro_vnni::<1, 2>(a, w, c, r + i, block + t);
                            }
                        }
                    }
                }
                r += rows;
            }
            block += nb;
        }
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn micro_vnni<const R: usize, const NB: usize>(
        a: &Operand,
        w: &Packed,
        c: *mut f32,
        r0: usize,
        b0: usize,
    ) {
        let (k, n) = (w.k, w.n);
        let flip = _mm512_set1_epi32(0x8080_8080u32 as i32);
        let mut acc_h = [[_mm512_setzero_si512(); NB]; R];
        let mut acc_l = [[_mm512_setzero_si512(); NB]; R];
        let wp = w.data.as_ptr().add(b0 * k * BLOCK);
        for quad in 0..k / 4 {
            let mut b = [_mm512_setzero_si512(); NB];
            for (t, b) in b.iter_mut().enumerate() {
                *b = _mm512_loadu_si512(wp.add(t * k * BLOCK + quad * 4 * BLOCK) as *const _);
            }
            for i in 0..R {
                let at = (r0 + i) * k + 4 * quad;
                let h = (a.high.as_ptr().add(at) as *const i32).read_unaligned();
                let l = (a.low.as_ptr().add(at) as *const i32).read_unaligned();
                let h = _mm512_xor_si512(_mm512_set1_epi32(h), flip);
                let l = _mm512_xor_si512(_mm512_set1_epi32(l), flip);
                for t in 0..NB {
                    acc_h[i][t] = _mm512_dpbusd_epi32(acc_h[i][t], h, b[t]);
                    acc_l[i][t] = _mm512_dpbusd_epi32(acc_l[i][t], l, b[t]);
                }
            }
        }
        for i in 0..R {
            let r = r0 + i;
            for t in 0..NB {
                let mut sh = [0i32; BLOCK];
                let mut sl = [0i32; BLOCK];
                _mm512_storeu_si512(sh.as_mut_ptr() as *mut _, acc_h[i][t]);
                _mm512_storeu_si512(sl.as_mut_ptr() as *mut _, acc_l[i][t]);
                let col0 = (b0 + t) * BLOCK;
                for col in 0..BLOCK {
                    let off = w.offset[col0 + col];
                    *c.add(r * n + col0 + col) = combine(sh[col] - off, sl[col] - off, a.scale[r]);
                }
            }
        }
    }

    // ---- AMX: one tile of 16 rows at a time against two blocks of columns, both digits: four
    // accumulating tiles (tmm0–3), the two digits' tiles of A (tmm4–5, 16 rows by 64), two of W
    // (tmm6–7, 16 quads by 16 columns: exactly a packed block's rows, read as they are).

    #[repr(C, align(64))]
    struct TileConfig([u8; 64]);

    fn tile_config() -> TileConfig {
        let mut cfg = [0u8; 64];
        cfg[0] = 1; // palette 1
        for t in 0..8 {
            cfg[16 + 2 * t] = 64; // bytes a row
            cfg[48 + t] = ROWS as u8; // rows
        }
        TileConfig(cfg)
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn gemm_amx(a: &Operand, w: &Packed, c: *mut f32, blocks: Range<usize>) {
        let (k, n) = (w.k, w.n);
        let cfg = tile_config();
        let a_stride = k; // bytes from one row of digits to the next
        let mut sums = [[0i32; ROWS * BLOCK]; 4];
        asm!("ldtilecfg [{0}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly));
        let mut block = blocks.start;
        while block < blocks.end {
            let w0 = w.data.as_ptr().add(block * k * BLOCK);
            let w1 = w0.add(k * BLOCK);
            let mut r = 0;
            while r < a.rows {
                let h = a.high.as_ptr().add(r * k);
                let l = a.low.as_ptr().add(r * k);
                asm!(
                    "tilezero tmm0",
                    "tilezero tmm1",
                    "tilezero tmm2",
                    "tilezero tmm3",
                    options(nostack, nomem)
                );
                for s in 0..k / 64 {
                    asm!(
                        "tileloadd tmm4, [{h} + {as_}]",
                        "tileloadd tmm5, [{l} + {as_}]",
                        "tileloadd tmm6, [{w0} + {ws}]",
                        "tileloadd tmm7, [{w1} + {ws}]",
                        "tdpbssd tmm0, tmm4, tmm6",
                        "tdpbssd tmm1, tmm5, tmm6",
                        "tdpbssd tmm2, tmm4, tmm7",
                        "tdpbssd tmm3, tmm5, tmm7",
                        h = in(reg) h.add(s * 64),
                        l = in(reg) l.add(s * 64),
                        w0 = in(reg) w0.add(s * 64 * BLOCK),
                        w1 = in(reg) w1.add(s * 64 * BLOCK),
                        as_ = in(reg) a_stride,
                        ws = in(reg) 64usize,
                        options(nostack, readonly)
                    );
                }
                asm!(
                    "tilestored [{s0} + {ss}], tmm0",
                    "tilestored [{s1} + {ss}], tmm1",
                    "tilestored [{s2} + {ss}], tmm2",
                    "tilestored [{s3} + {ss}], tmm3",
                    s0 = in(reg) sums[0].as_mut_ptr(),
                    s1 = in(reg) sums[1].as_mut_ptr(),
                    s2 = in(reg) sums[2].as_mut_ptr(),
                    s3 = in(reg) sums[3].as_mut_ptr(),
                    ss = in(reg) BLOCK * 4,
                    options(nostack)
                );
                for i in 0..ROWS {
                    let scale = a.scale[r + i];
                    let out = c.add((r + i) * n + block * BLOCK);
                    for col in 0..BLOCK {
                        let at = i * BLOCK + col;
                        *out.add(col) = combine(sums[0][at], sums[1][at], scale);
                        *out.add(BLOCK + col) = combine(sums[2][at], sums[3][at], scale);
                    }
                }
                r += ROWS;
            }
            block += 2;
        }
        asm!("tilerelease", options(nostack, nomem));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded stream of numbers (no dependency for a test's data).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn f32(&mut self) -> f32 {
            (self.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        }
    }

    #[test]
    fn digits_hold_a_row_to_sixteen_bits() {
        let mut rng = Rng(7);
        let k = 384;
        let mut x: Vec<f32> = (0..3 * k).map(|_| rng.f32() * 3.0).collect();
        x[5] = 40.0; // an outlier, as BERT's hidden states have
        x[k..2 * k].fill(0.0); // a row of zeros
        let mut a = Operand::new(3, k);
        a.set(&x, k);
        assert_eq!(a.rows(), 16);
        for r in [0, 2] {
            let row = &x[r * k..(r + 1) * k];
            let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
            for (i, &v) in row.iter().enumerate() {
                let back = a.scale[r] * (a.high[r * k + i] as f32 + a.low[r * k + i] as f32 / LOW);
                assert!(
                    (back - v).abs() <= max / 64_000.0,
                    "row {r} [{i}]: {v} -> {back}"
                );
            }
        }
        assert_eq!(a.scale[1], 0.0);
        assert!(a.high[k..2 * k].iter().all(|&d| d == 0));
        assert!(a.scale[3..].iter().all(|&s| s == 0.0), "the padding rows");
        // A NaN or an infinity in a row: that row is NaN, the others are kept.
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            x[2 * k + 3] = bad;
            a.set(&x, k);
            assert!(a.scale[2].is_nan() && a.scale[0] > 0.0);
        }
    }

    /// Each kernel this CPU runs against the portable one, bit for bit, on every shape the model
    /// uses and a few more, from one tile of rows to several, in whole and in blocks; and the
    /// portable one against the sum of the digits' values in f64.
    #[test]
    fn every_kernel_gives_the_portable_kernels_bits() {
        let mut rng = Rng(0x9e3779b97f4a7c15);
        let skipped = unavailable();
        let kernels = available();
        eprintln!(
            "gemm kernels tested: {:?}; skipped on this CPU: {skipped:?}",
            kernels.iter().map(|g| g.name).collect::<Vec<_>>()
        );
        for &(k, n) in &[
            (64, 32),
            (384, 1152),
            (384, 384),
            (384, 1536),
            (1536, 384),
            (128, 96),
        ] {
            let q: Vec<i8> = (0..k * n)
                .map(|_| ((rng.next() % 255) as i32 - 127) as i8)
                .collect();
            let w = Packed::new(&q, k, n);
            for m in [1, 16, 17, 40, 80] {
                let x: Vec<f32> = (0..m * k).map(|_| rng.f32() * 5.0).collect();
                let mut a = Operand::new(m, k);
                a.set(&x, k);
                let rows = a.rows();
                let mut want = vec![0f32; rows * n];
                PORTABLE.run(&a, &w, &mut want);
                for (r, col) in [(0, 0), (m - 1, n - 1), (m / 2, n / 3)] {
                    let exact: f64 = (0..k)
                        .map(|i| {
                            let d = a.high[r * k + i] as f64 + a.low[r * k + i] as f64 / 254.0;
                            a.scale[r] as f64 * d * q[i * n + col] as f64
                        })
                        .sum();
                    let got = want[r * n + col] as f64;
                    assert!(
                        (got - exact).abs() <= 1e-6 * exact.abs().max(1.0),
                        "portable {k}x{n} m {m} ({r}, {col}): {got} vs {exact}"
                    );
                }
                for g in &kernels {
                    let mut got = vec![f32::NAN; rows * n];
                    g.run(&a, &w, &mut got);
                    assert!(
                        got.iter()
                            .zip(&want)
                            .all(|(x, y)| x.to_bits() == y.to_bits()),
                        "{} {k}x{n} m {m}",
                        g.name
                    );
                    // The second half of the columns alone leaves the first half untouched.
                    let mut half = vec![f32::NAN; rows * n];
                    let nb = Gemm::blocks(n);
                    let cut = nb / 4 * 2;
                    // SAFETY: `half` is this thread's own.
                    unsafe { g.run_blocks(&a, &w, half.as_mut_ptr(), half.len(), cut..nb) };
                    for r in 0..rows {
                        for col in 0..n {
                            let (x, y) = (half[r * n + col], want[r * n + col]);
                            if col < cut * 16 {
                                assert!(x.is_nan(), "{} wrote outside its blocks", g.name);
                            } else {
                                assert_eq!(x.to_bits(), y.to_bits(), "{} in blocks", g.name);
                            }
                        }
                    }
                }
            }
        }
    }
}
