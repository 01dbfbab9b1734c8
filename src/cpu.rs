//! What this CPU can run: the one place Umwelt asks the processor about its instructions.
//! Every CPU-specific kernel (the vector kernels in [`crate::kernels`], the embedding's products
//! in [`crate::embed::gemm`] and its element-wise work in [`crate::embed::minilm`]) names the
//! [`Level`] it needs, and runs only where [`supports`] says so; the portable code runs
//! everywhere. A level includes every feature the kernels of that level enable.

use std::sync::OnceLock;

/// A tier of instructions, lowest first; each includes the ones below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// No CPU-specific instructions.
    Portable,
    /// AVX2 (and FMA's absence does not matter: no kernel fuses a multiply-add).
    Avx2,
    /// AVX-512 F, BW and VL, with AVX2.
    Avx512,
    /// [`Level::Avx512`] with VNNI (the byte products).
    Avx512Vnni,
    /// [`Level::Avx512Vnni`] with AMX tiles for int8, and the system's leave to use them.
    AmxInt8,
}

/// What the CPU reports, read once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    pub avx2: bool,
    pub avx512: bool,
    pub avx512_vnni: bool,
    pub amx_int8: bool,
}

/// This CPU's features (detected on first use).
pub fn features() -> &'static Features {
    static FEATURES: OnceLock<Features> = OnceLock::new();
    FEATURES.get_or_init(detect)
}

/// Whether this CPU runs kernels of `level`.
pub fn supports(level: Level) -> bool {
    features().supports(level)
}

impl Features {
    /// The levels a CPU reporting these flags runs (`has("avx512vl")`: whether it says it has
    /// that instruction set; `amx_granted`: whether the system lets this process use AMX tiles,
    /// asked only when the CPU has them). A level needs every feature its kernels enable, and
    /// every level below it.
    pub fn from_flags(has: impl Fn(&str) -> bool, amx_granted: impl FnOnce() -> bool) -> Features {
        let avx2 = has("avx2");
        let avx512 = avx2 && has("avx512f") && has("avx512bw") && has("avx512vl");
        let avx512_vnni = avx512 && has("avx512vnni");
        let amx_int8 = avx512_vnni && has("amx-tile") && has("amx-int8") && amx_granted();
        Features {
            avx2,
            avx512,
            avx512_vnni,
            amx_int8,
        }
    }

    /// Whether a CPU with these features runs kernels of `level`.
    pub fn supports(&self, level: Level) -> bool {
        match level {
            Level::Portable => true,
            Level::Avx2 => self.avx2,
            Level::Avx512 => self.avx512,
            Level::Avx512Vnni => self.avx512_vnni,
            Level::AmxInt8 => self.amx_int8,
        }
    }
}

/// The highest level this CPU runs.
pub fn best() -> Level {
    [
        Level::AmxInt8,
        Level::Avx512Vnni,
        Level::Avx512,
        Level::Avx2,
    ]
    .into_iter()
    .find(|&l| supports(l))
    .unwrap_or(Level::Portable)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Features {
    Features::from_flags(
        |flag| match flag {
            "avx2" => is_x86_feature_detected!("avx2"),
            "avx512f" => is_x86_feature_detected!("avx512f"),
            "avx512bw" => is_x86_feature_detected!("avx512bw"),
            "avx512vl" => is_x86_feature_detected!("avx512vl"),
            "avx512vnni" => is_x86_feature_detected!("avx512vnni"),
            "amx-tile" | "amx-int8" => amx_int8_reported(),
            _ => false,
        },
        amx_int8_granted,
    )
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Features {
    Features {
        avx2: false,
        avx512: false,
        avx512_vnni: false,
        amx_int8: false,
    }
}

/// Whether the CPU reports AMX tiles with int8 (CPUID leaf 7: EDX bit 24 AMX-TILE, bit 25
/// AMX-INT8).
#[cfg(target_arch = "x86_64")]
fn amx_int8_reported() -> bool {
    let leaf7 = std::arch::x86_64::__cpuid_count(7, 0);
    leaf7.edx & (1 << 24) != 0 && leaf7.edx & (1 << 25) != 0
}

/// The process's leave to use the AMX tile registers (Linux asks each process to request them:
/// `arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`).
#[cfg(target_arch = "x86_64")]
fn amx_int8_granted() -> bool {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_needs_every_feature_its_kernels_enable_whatever_this_cpu_has() {
        let cpu = |flags: &[&str]| Features::from_flags(|f| flags.contains(&f), || true);
        let all = [
            "avx2",
            "avx512f",
            "avx512bw",
            "avx512vl",
            "avx512vnni",
            "amx-tile",
            "amx-int8",
        ];
        assert!(cpu(&all).supports(Level::AmxInt8));
        // AVX-512 without VL (the kernels use 256-bit forms of AVX-512 instructions), or
        // without AVX2 (they mix both): no AVX-512 level, nor any above it.
        for missing in ["avx512vl", "avx512bw", "avx2"] {
            let flags: Vec<&str> = all.iter().copied().filter(|f| *f != missing).collect();
            let f = cpu(&flags);
            assert!(!f.supports(Level::Avx512), "without {missing}");
            assert!(
                !f.supports(Level::Avx512Vnni) && !f.supports(Level::AmxInt8),
                "without {missing}"
            );
        }
        // AMX that the system does not grant is no AMX; it is not even asked without VNNI.
        let refused = Features::from_flags(|f| all.contains(&f), || false);
        assert!(!refused.supports(Level::AmxInt8) && refused.supports(Level::Avx512Vnni));
        let no_vnni = [
            "avx2", "avx512f", "avx512bw", "avx512vl", "amx-tile", "amx-int8",
        ];
        let asked = std::cell::Cell::new(false);
        let f = Features::from_flags(
            |f| no_vnni.contains(&f),
            || {
                asked.set(true);
                true
            },
        );
        assert!(!f.supports(Level::AmxInt8) && !asked.get());
        assert!(cpu(&[]).supports(Level::Portable) && !cpu(&[]).supports(Level::Avx2));
    }

    #[test]
    fn each_level_implies_the_ones_below_it() {
        let levels = [
            Level::Portable,
            Level::Avx2,
            Level::Avx512,
            Level::Avx512Vnni,
            Level::AmxInt8,
        ];
        for (i, &l) in levels.iter().enumerate() {
            if supports(l) {
                assert!(levels[..i].iter().all(|&below| supports(below)), "{l:?}");
            }
        }
        assert!(supports(best()));
        #[cfg(target_arch = "x86_64")]
        assert_eq!(supports(Level::Avx2), is_x86_feature_detected!("avx2"));
    }
}
