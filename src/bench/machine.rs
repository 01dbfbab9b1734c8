//! What the numbers were measured on.

use serde::{Deserialize, Serialize};

/// The machine and build a run happened on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Machine {
    pub cpu: String,
    pub threads: usize,
    pub memory_gib: f64,
    pub os: String,
    pub profile: String,
    pub sqlite: String,
    pub sqlite_vec: String,
    pub onnxruntime: String,
    pub whisper_cpp: String,
    pub perf: String,
    /// The vector kernels in use ([`crate::kernels`]): `avx512-vnni`, `avx2` or `portable`.
    #[serde(default)]
    pub kernels: String,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

impl Machine {
    /// Read the machine this process runs on.
    pub fn current() -> Machine {
        let cpuinfo = read("/proc/cpuinfo");
        let cpu = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let mem_kib: f64 = read("/proc/meminfo")
            .lines()
            .find(|l| l.starts_with("MemTotal"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        let os = read("/etc/os-release")
            .lines()
            .find(|l| l.starts_with("PRETTY_NAME="))
            .map(|l| {
                l.trim_start_matches("PRETTY_NAME=")
                    .trim_matches('"')
                    .to_string()
            })
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        // Only reads the extension's version string; no benchmark runs in memory.
        crate::store::register_sqlite_vec();
        let sqlite_vec = rusqlite::Connection::open_in_memory()
            .ok()
            .and_then(|c| {
                c.query_row("SELECT vec_version()", [], |r| r.get::<_, String>(0))
                    .ok()
            })
            .unwrap_or_else(|| "unknown".into());
        Machine {
            cpu,
            threads: crate::optimisations::threads(),
            memory_gib: (mem_kib / 1024.0 / 1024.0 * 10.0).round() / 10.0,
            os,
            profile: if cfg!(debug_assertions) {
                "debug".into()
            } else {
                "release".into()
            },
            sqlite: rusqlite::version().to_string(),
            sqlite_vec,
            onnxruntime: "1.31.1".into(),
            whisper_cpp: whisper_rs_version(),
            perf: if crate::optimisations::enabled() {
                "on".into()
            } else {
                "off (UMWELT_PERF=off)".into()
            },
            kernels: crate::kernels::current().name.into(),
        }
    }
}

fn whisper_rs_version() -> String {
    // whisper-rs 0.16 builds whisper.cpp 1.8 from source.
    "1.8 (whisper-rs 0.16)".into()
}

/// This process's resident memory in MiB (Linux: `VmRSS` of `/proc/self/status`).
pub fn resident_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}
