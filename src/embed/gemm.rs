//! The embedding model's matrix products, `C = A · W`, chosen at run time for the CPU at hand:
//! AMX tiles where the CPU has them (Intel Xeon from Sapphire Rapids on), AVX-512 BF16
//! (`vdpbf16ps`: Zen 4 and 5, the same Xeons), AVX2 with FMA, and the portable code everywhere
//! else, which is always correct.
//!
//! The operands are what makes this both fast and faithful to the model file:
//! - `W` holds the file's int8 weights as they are (whole numbers from −127 to 127, exact in
//!   bf16), one byte each; the caller multiplies each column of `C` by the file's scale for it,
//!   which is the file's own `W = q · scale` factored out of the sum. A short text's products
//!   wait on memory (its 16 rows use each weight 16 times), so weights kept as bytes, and
//!   widened to bf16 or f32 in registers or in a small buffer as they are used, halve the
//!   time the widened copy would take (21 MB a text against 10.6 MB).
//! - `A` is the activations rounded to bf16 (8 significant bits, as wide an exponent as f32).
//!   A product of two bf16 values is exact in f32, so the only roundings are the f32 sums'.
//!   Against the model computed wholly in f32 the sentence vectors differ by less than 10⁻⁵ in
//!   cosine (measured over the bench texts and the dictation set; `tests/it/embed.rs`).
//!
//! Every kernel sums pair by pair (`k = 2p + 1`, then `2p`, as `vdpbf16ps` does), so they agree
//! to within the f32 rounding of a sum; the tests hold each kernel the CPU runs to the portable
//! one.
//!
//! Layouts: `A` is row-major, `m` rows of `k` bf16 (as `u16` bits), with `m` a multiple of
//! [`ROWS`] (the caller pads with zero rows: AMX works on 16 rows at a time). `W` is packed by
//! [`Packed::new`]: blocks of 16 columns, each block `k / 2` rows of 16 pairs (`W[2p][c]`,
//! `W[2p + 1][c]`) — widened, one AVX-512 register, or one row of an AMX tile. `C` is
//! row-major f32, `m` rows of `n`.

use std::ops::Range;
use std::sync::OnceLock;

/// Rows of `A` are taken in multiples of this (one AMX tile).
pub const ROWS: usize = 16;
/// Columns of a packed block.
const BLOCK: usize = 16;
/// `k` and `n` must be multiples of this (an AMX tile is 32 bf16 deep, and its kernel takes two
/// blocks of columns at a time).
pub const ALIGN: usize = 32;

/// `m` rounded up to whole [`ROWS`].
pub const fn padded_rows(m: usize) -> usize {
    m.div_ceil(ROWS) * ROWS
}

/// A bf16 value's bits for `x`, rounded to nearest, ties to even (NaN stays NaN).
#[inline]
pub fn to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) | 0x40) as u16;
    }
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

/// The f32 a bf16 value stands for.
#[inline]
pub fn from_bf16(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// Numbers for which all-zero bits are zero (so a zeroed line holds zeros).
pub trait Zeroed: Copy + sealed::Sealed {}
impl Zeroed for i8 {}
impl Zeroed for u16 {}
impl Zeroed for f32 {}
mod sealed {
    pub trait Sealed {}
    impl Sealed for i8 {}
    impl Sealed for u16 {}
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

/// A weight matrix of whole numbers, `k` rows by `n` columns, packed for the kernels.
pub struct Packed {
    k: usize,
    n: usize,
    data: Aligned<i8>,
}

impl Packed {
    /// Pack `q`, row-major `k × n` (`q[r * n + c]` is row `r`, column `c`).
    pub fn new(q: &[i8], k: usize, n: usize) -> Packed {
        assert!(
            k.is_multiple_of(ALIGN) && n.is_multiple_of(ALIGN) && q.len() == k * n,
            "a {k} x {n} matrix cannot be packed from {} values",
            q.len()
        );
        let mut data = Aligned::<i8>::zeroed(k * n);
        for block in 0..n / BLOCK {
            for p in 0..k / 2 {
                let at = (block * (k / 2) + p) * 2 * BLOCK;
                for c in 0..BLOCK {
                    let col = block * BLOCK + c;
                    data[at + 2 * c] = q[2 * p * n + col];
                    data[at + 2 * c + 1] = q[(2 * p + 1) * n + col];
                }
            }
        }
        Packed { k, n, data }
    }

    pub fn k(&self) -> usize {
        self.k
    }

    pub fn n(&self) -> usize {
        self.n
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.data.len()
    }
}

/// One set of kernels.
#[derive(Clone, Copy)]
pub struct Gemm {
    /// What it uses: `amx-bf16`, `avx512-bf16`, `avx2` or `portable`.
    pub name: &'static str,
    /// The product for the column blocks `blocks` (an even start and end), once
    /// [`Gemm::run_blocks`] has checked the lengths (the wide kernels rely on them).
    run: unsafe fn(a: &[u16], m: usize, w: &Packed, c: *mut f32, blocks: Range<usize>),
}

impl Gemm {
    /// `C = A · W` for `m` rows of `A` (`m` a multiple of [`ROWS`]): `a` holds `m · w.k()` bf16,
    /// `c` receives `m · w.n()` f32.
    pub fn run(&self, a: &[u16], m: usize, w: &Packed, c: &mut [f32]) {
        assert!(
            m.is_multiple_of(ROWS) && a.len() >= m * w.k && c.len() >= m * w.n,
            "a {m}-row product with a {} x {} matrix needs more room",
            w.k,
            w.n
        );
        // SAFETY: `c` is borrowed whole, for this call alone.
        unsafe { self.run_blocks(a, m, w, c.as_mut_ptr(), c.len(), 0..w.n / BLOCK) }
    }

    /// Column blocks `blocks` (16 columns each; an even start and end) of `C = A · W` into `c`,
    /// which holds `c_len` f32 (`m · w.n()` at least): the rest of `c` is not touched, so two
    /// threads can each make their own columns of one product.
    ///
    /// # Safety
    /// `c` must be valid for writes of `c_len` f32, and no one else may read or write the
    /// columns `blocks` of its first `m` rows during the call.
    pub unsafe fn run_blocks(
        &self,
        a: &[u16],
        m: usize,
        w: &Packed,
        c: *mut f32,
        c_len: usize,
        blocks: Range<usize>,
    ) {
        assert!(
            m.is_multiple_of(ROWS) && a.len() >= m * w.k && c_len >= m * w.n,
            "a {m}-row product with a {} x {} matrix needs more room",
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
        unsafe { (self.run)(a, m, w, c, blocks) }
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
        if x86::has_avx512_bf16() {
            out.push(x86::AVX512_BF16);
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
        if !x86::has_avx512_bf16() {
            out.push(x86::AVX512_BF16.name);
        }
        if !x86::has_avx2() {
            out.push(x86::AVX2.name);
        }
    }
    out
}

/// Pair by pair, `2p + 1` then `2p`, sixteen columns at a time.
unsafe fn portable(a: &[u16], m: usize, w: &Packed, c: *mut f32, blocks: Range<usize>) {
    let (k, n) = (w.k, w.n);
    for r in 0..m {
        let row = &a[r * k..(r + 1) * k];
        for block in blocks.clone() {
            let wb = &w.data[block * k * BLOCK..(block + 1) * k * BLOCK];
            let mut acc = [0f32; BLOCK];
            for (pair, wp) in row.chunks_exact(2).zip(wb.chunks_exact(2 * BLOCK)) {
                let (x0, x1) = (from_bf16(pair[0]), from_bf16(pair[1]));
                for (s, wc) in acc.iter_mut().zip(wp.chunks_exact(2)) {
                    *s += x1 * wc[1] as f32;
                    *s += x0 * wc[0] as f32;
                }
            }
            // SAFETY: inside the first `m` rows (the caller checked `c`'s length), in a block
            // of columns the caller gave this call.
            unsafe {
                std::ptr::copy_nonoverlapping(acc.as_ptr(), c.add(r * n + block * BLOCK), BLOCK)
            };
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::asm;
    use std::arch::x86_64::*;
    use std::cell::RefCell;
    use std::ops::Range;
    use std::sync::OnceLock;

    use super::{Aligned, Gemm, Packed, BLOCK, ROWS};

    pub fn has_avx2() -> bool {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }

    pub fn has_avx512_bf16() -> bool {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512bf16")
    }

    /// AMX with bf16 (and AVX-512 BF16, which widens the weights for it), and the kernel's
    /// leave to use the tile registers (Linux asks each process to request them:
    /// `arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`).
    pub fn has_amx() -> bool {
        static GRANTED: OnceLock<bool> = OnceLock::new();
        *GRANTED.get_or_init(|| {
            // CPUID leaf 7: EDX bit 22 AMX-BF16, bit 24 AMX-TILE.
            let leaf7 = __cpuid_count(7, 0);
            if leaf7.edx & (1 << 22) == 0 || leaf7.edx & (1 << 24) == 0 || !has_avx512_bf16() {
                return false;
            }
            #[cfg(target_os = "linux")]
            {
                const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
                const XFEATURE_XTILEDATA: libc::c_long = 18;
                // SAFETY: a request for a permission; it touches no memory of ours.
                unsafe {
                    libc::syscall(
                        libc::SYS_arch_prctl,
                        ARCH_REQ_XCOMP_PERM,
                        XFEATURE_XTILEDATA,
                    ) == 0
                }
            }
            #[cfg(not(target_os = "linux"))]
            false
        })
    }

    pub const AVX2: Gemm = Gemm {
        name: "avx2",
        run: gemm_avx2,
    };

    pub const AVX512_BF16: Gemm = Gemm {
        name: "avx512-bf16",
        run: gemm_avx512_bf16,
    };

    pub const AMX: Gemm = Gemm {
        name: "amx-bf16",
        run: gemm_amx,
    };

    // ---- AVX2 + FMA: sixteen weights (eight columns' pairs) widened to i16, their even and
    // odd halves to f32; four rows by sixteen columns at a time.

    #[target_feature(enable = "avx2,fma")]
    unsafe fn gemm_avx2(a: &[u16], m: usize, w: &Packed, c: *mut f32, blocks: Range<usize>) {
        let (k, n) = (w.k, w.n);
        let (pa, pw, pc) = (a.as_ptr(), w.data.as_ptr(), c);
        for block in blocks {
            let wb = pw.add(block * k * BLOCK);
            let mut r = 0;
            while r < m {
                micro_avx2(pa.add(r * k), k, wb, pc.add(r * n + block * BLOCK), n);
                r += 4;
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn micro_avx2(a: *const u16, k: usize, w: *const i8, c: *mut f32, n: usize) {
        let hi_mask = _mm256_set1_epi32(0xffff0000u32 as i32);
        let mut acc = [[_mm256_setzero_ps(); 2]; 4];
        for p in 0..k / 2 {
            let wp = w.add(p * 2 * BLOCK) as *const __m128i;
            let mut even = [_mm256_setzero_ps(); 2];
            let mut odd = [_mm256_setzero_ps(); 2];
            for h in 0..2 {
                // Eight columns' pairs: as i32 lanes, the even weight low, the odd one high.
                let v = _mm256_cvtepi8_epi16(_mm_loadu_si128(wp.add(h)));
                even[h] = _mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16));
                odd[h] = _mm256_cvtepi32_ps(_mm256_srai_epi32(v, 16));
            }
            for (i, acc) in acc.iter_mut().enumerate() {
                let pair = (a.add(i * k + 2 * p) as *const i32).read_unaligned();
                let v = _mm256_set1_epi32(pair);
                let x0 = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
                let x1 = _mm256_castsi256_ps(_mm256_and_si256(v, hi_mask));
                for h in 0..2 {
                    acc[h] = _mm256_fmadd_ps(x1, odd[h], acc[h]);
                    acc[h] = _mm256_fmadd_ps(x0, even[h], acc[h]);
                }
            }
        }
        for (i, acc) in acc.iter().enumerate() {
            _mm256_storeu_ps(c.add(i * n), acc[0]);
            _mm256_storeu_ps(c.add(i * n + 8), acc[1]);
        }
    }

    /// 32 weights (a packed row of one block) widened to bf16: to i32, to f32, to bf16 (exact:
    /// they are whole numbers below 128).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    unsafe fn widen32(w: *const i8) -> __m512bh {
        let v = _mm256_loadu_si256(w as *const __m256i);
        let lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(v)));
        let hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(v, 1)));
        _mm512_cvtne2ps_pbh(hi, lo)
    }

    // ---- AVX-512 BF16: `vdpbf16ps`, a pair of A broadcast against a row of pairs of a block;
    // up to six rows by four blocks (sixty-four columns) of sums in registers.

    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    unsafe fn gemm_avx512_bf16(a: &[u16], m: usize, w: &Packed, c: *mut f32, blocks: Range<usize>) {
        let (k, n) = (w.k, w.n);
        let (pa, pw, pc) = (a.as_ptr(), w.data.as_ptr(), c);
        let mut block = blocks.start;
        while block < blocks.end {
            let nb = (blocks.end - block).min(4);
            let mut r = 0;
            while r < m {
                let rows = (m - r).min(6);
                let (a, c) = (pa.add(r * k), pc.add(r * n + block * BLOCK));
                let w = pw.add(block * k * BLOCK);
                match (rows, nb) {
                    (6, 4) => micro_bf16::<6, 4>(a, k, w, c, n),
                    (4, 4) => micro_bf16::<4, 4>(a, k, w, c, n),
                    (rows, nb) => micro_bf16_any(rows, nb, a, k, w, c, n),
                }
                r += rows;
            }
            block += nb;
        }
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    unsafe fn micro_bf16<const R: usize, const NB: usize>(
        a: *const u16,
        k: usize,
        w: *const i8,
        c: *mut f32,
        n: usize,
    ) {
        let mut acc = [[_mm512_setzero_ps(); NB]; R];
        let stride = k * BLOCK; // bytes from one block to the next
        for p in 0..k / 2 {
            let mut b = [widen32(w.add(p * 2 * BLOCK)); NB];
            for (t, b) in b.iter_mut().enumerate().skip(1) {
                *b = widen32(w.add(t * stride + p * 2 * BLOCK));
            }
            for (i, acc) in acc.iter_mut().enumerate() {
                let pair = (a.add(i * k + 2 * p) as *const i32).read_unaligned();
                let x: __m512bh = std::mem::transmute(_mm512_set1_epi32(pair));
                for t in 0..NB {
                    acc[t] = _mm512_dpbf16_ps(acc[t], x, b[t]);
                }
            }
        }
        for (i, acc) in acc.iter().enumerate() {
            for (t, acc) in acc.iter().enumerate() {
                _mm512_storeu_ps(c.add(i * n + t * BLOCK), *acc);
            }
        }
    }

    /// Any other corner: one row and one block at a time.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    unsafe fn micro_bf16_any(
        rows: usize,
        nb: usize,
        a: *const u16,
        k: usize,
        w: *const i8,
        c: *mut f32,
        n: usize,
    ) {
        for i in 0..rows {
            for t in 0..nb {
                micro_bf16::<1, 1>(
                    a.add(i * k),
                    k,
                    w.add(t * k * BLOCK),
                    c.add(i * n + t * BLOCK),
                    n,
                );
            }
        }
    }

    // ---- AMX: tiles of 16 rows. Four accumulating tiles (tmm0–3: two row tiles by two column
    // blocks), two tiles of A (tmm4–5, 16 rows by 32 bf16), two of W (tmm6–7, 16 pairs by 16
    // columns, exactly a packed block's rows, widened to bf16 into a buffer of this thread's
    // once per pair of blocks and used by every row tile).

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

    thread_local! {
        /// Two blocks of weights widened to bf16 (the longest `k` is 1536: 96 KB).
        static WIDE: RefCell<Aligned<u16>> = RefCell::new(Aligned::zeroed(0));
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    unsafe fn gemm_amx(a: &[u16], m: usize, w: &Packed, c: *mut f32, blocks: Range<usize>) {
        WIDE.with(|wide| {
            let mut wide = wide.borrow_mut();
            if wide.len() < 2 * w.k * BLOCK {
                *wide = Aligned::zeroed(2 * w.k * BLOCK);
            }
            amx(a, m, w, c, blocks, &mut wide)
        })
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    unsafe fn amx(
        a: &[u16],
        m: usize,
        w: &Packed,
        c: *mut f32,
        blocks: Range<usize>,
        wide: &mut [u16],
    ) {
        let (k, n) = (w.k, w.n);
        let (pa, pw, pc) = (a.as_ptr(), w.data.as_ptr(), c);
        let cfg = tile_config();
        let a_stride = k * 2; // bytes from one row of A to the next
        let c_stride = n * 4;
        let pair_len = 2 * k * BLOCK; // two blocks of weights
        asm!("ldtilecfg [{0}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly));
        let mut block = blocks.start;
        while block < blocks.end {
            // Widen this pair of blocks: 32 weights (64 bytes of bf16) at a time.
            let src = pw.add(block * k * BLOCK);
            let dst = wide.as_mut_ptr();
            let mut i = 0;
            while i < pair_len {
                _mm512_storeu_si512(
                    dst.add(i) as *mut _,
                    std::mem::transmute::<__m512bh, __m512i>(widen32(src.add(i))),
                );
                i += 32;
            }
            let w0 = dst as *const u16;
            let w1 = w0.add(k * BLOCK);
            let mut r = 0;
            while r < m {
                let a0 = pa.add(r * k);
                let c0 = pc.add(r * n + block * BLOCK);
                if r + 2 * ROWS <= m {
                    let a1 = a0.add(ROWS * k);
                    asm!(
                        "tilezero tmm0",
                        "tilezero tmm1",
                        "tilezero tmm2",
                        "tilezero tmm3",
                        options(nostack, nomem)
                    );
                    for s in 0..k / 32 {
                        asm!(
                            "tileloadd tmm4, [{a0} + {as_}]",
                            "tileloadd tmm5, [{a1} + {as_}]",
                            "tileloadd tmm6, [{w0} + {ws}]",
                            "tileloadd tmm7, [{w1} + {ws}]",
                            "tdpbf16ps tmm0, tmm4, tmm6",
                            "tdpbf16ps tmm1, tmm4, tmm7",
                            "tdpbf16ps tmm2, tmm5, tmm6",
                            "tdpbf16ps tmm3, tmm5, tmm7",
                            a0 = in(reg) a0.add(s * 32),
                            a1 = in(reg) a1.add(s * 32),
                            w0 = in(reg) w0.add(s * 32 * BLOCK),
                            w1 = in(reg) w1.add(s * 32 * BLOCK),
                            as_ = in(reg) a_stride,
                            ws = in(reg) 64usize,
                            options(nostack, readonly)
                        );
                    }
                    let c1 = c0.add(ROWS * n);
                    asm!(
                        "tilestored [{c0} + {cs}], tmm0",
                        "tilestored [{c0b} + {cs}], tmm1",
                        "tilestored [{c1} + {cs}], tmm2",
                        "tilestored [{c1b} + {cs}], tmm3",
                        c0 = in(reg) c0,
                        c0b = in(reg) c0.add(BLOCK),
                        c1 = in(reg) c1,
                        c1b = in(reg) c1.add(BLOCK),
                        cs = in(reg) c_stride,
                        options(nostack)
                    );
                    r += 2 * ROWS;
                } else {
                    asm!("tilezero tmm0", "tilezero tmm1", options(nostack, nomem));
                    for s in 0..k / 32 {
                        asm!(
                            "tileloadd tmm4, [{a0} + {as_}]",
                            "tileloadd tmm6, [{w0} + {ws}]",
                            "tileloadd tmm7, [{w1} + {ws}]",
                            "tdpbf16ps tmm0, tmm4, tmm6",
                            "tdpbf16ps tmm1, tmm4, tmm7",
                            a0 = in(reg) a0.add(s * 32),
                            w0 = in(reg) w0.add(s * 32 * BLOCK),
                            w1 = in(reg) w1.add(s * 32 * BLOCK),
                            as_ = in(reg) a_stride,
                            ws = in(reg) 64usize,
                            options(nostack, readonly)
                        );
                    }
                    asm!(
                        "tilestored [{c0} + {cs}], tmm0",
                        "tilestored [{c0b} + {cs}], tmm1",
                        c0 = in(reg) c0,
                        c0b = in(reg) c0.add(BLOCK),
                        cs = in(reg) c_stride,
                        options(nostack)
                    );
                    r += ROWS;
                }
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
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(to_bf16(1.0), 0x3f80);
        assert_eq!(from_bf16(to_bf16(-2.5)), -2.5);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even one, 1.
        assert_eq!(to_bf16(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(to_bf16(1.0 + 3.0 / 256.0), 0x3f82);
        assert!(from_bf16(to_bf16(f32::NAN)).is_nan());
        for q in -128..=127 {
            assert_eq!(
                from_bf16(to_bf16(q as f32)),
                q as f32,
                "int8 values are exact"
            );
        }
    }

    /// Each kernel this CPU runs against the portable one, on every shape the model uses and a
    /// few more, rows from one tile to several (and an odd number of tiles).
    #[test]
    fn every_kernel_agrees_with_the_portable_one() {
        let mut rng = Rng(0x9e3779b97f4a7c15);
        let skipped = unavailable();
        let kernels = available();
        eprintln!(
            "gemm kernels tested: {:?}; skipped on this CPU: {skipped:?}",
            kernels.iter().map(|g| g.name).collect::<Vec<_>>()
        );
        for &(k, n) in &[
            (32, 32),
            (384, 1152),
            (384, 384),
            (384, 1536),
            (1536, 384),
            (64, 96),
        ] {
            let q: Vec<i8> = (0..k * n)
                .map(|_| ((rng.next() % 255) as i32 - 127) as i8)
                .collect();
            let colmax: Vec<f32> = (0..n)
                .map(|c| {
                    (0..k)
                        .map(|i| (q[i * n + c] as f32).abs())
                        .fold(0.0, f32::max)
                })
                .collect();
            let w = Packed::new(&q, k, n);
            for m in [16, 32, 48, 80] {
                let a: Vec<u16> = (0..m * k).map(|_| to_bf16(rng.f32() * 3.0)).collect();
                let rowabs: Vec<f32> = (0..m)
                    .map(|r| {
                        a[r * k..(r + 1) * k]
                            .iter()
                            .map(|&x| from_bf16(x).abs())
                            .sum()
                    })
                    .collect();
                let mut want = vec![0f32; m * n];
                PORTABLE.run(&a, m, &w, &mut want);
                // The portable kernel itself against a plain triple loop in f64.
                for (r, c) in [(0, 0), (m - 1, n - 1), (m / 2, n / 3)] {
                    let exact: f64 = (0..k)
                        .map(|i| from_bf16(a[r * k + i]) as f64 * q[i * n + c] as f64)
                        .sum();
                    let bound: f64 = (0..k)
                        .map(|i| (from_bf16(a[r * k + i]) as f64 * q[i * n + c] as f64).abs())
                        .sum();
                    assert!(
                        (want[r * n + c] as f64 - exact).abs() <= bound * 1e-6 + 1e-6,
                        "portable {k}x{n} m {m} ({r}, {c}): {} vs {exact}",
                        want[r * n + c]
                    );
                }
                for g in &kernels {
                    let mut got = vec![f32::NAN; m * n];
                    g.run(&a, m, &w, &mut got);
                    for (i, (x, y)) in got.iter().zip(&want).enumerate() {
                        let bound = rowabs[i / n] * colmax[i % n];
                        assert!(
                            (x - y).abs() <= 1e-5 * bound,
                            "{} {k}x{n} m {m} at {i}: {x} vs {y}",
                            g.name
                        );
                    }
                }
            }
        }
    }
}
