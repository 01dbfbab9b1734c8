//! Where model files come from, and the check that they are the files we pinned.
//!
//! Every file is named in `models/manifest.tsv` (registry, version, size, sha256). The set-up
//! script fetches them into a cache; at run time [`resolve`] looks, in order, in
//! `$UMWELT_MODELS_DIR`, in `~/.cache/umwelt/models`, and in the `models/` folder bundled beside
//! the executable. A file is verified (size and sha256) before it is first loaded, and again at
//! every later load (after an idle unload, say) if it is no longer the same file on disk (its
//! size, modification time or inode changed): a damaged or wrong file is an
//! [`Error::ModelCorrupt`] naming the file and the fix, never a crash in the runtime that reads it.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | the manifest, the resolver, the sha256 check |
//! | `onnx.rs` | ONNX Runtime (the environment, sessions) for the models that run on it |
//! | `ggml.rs` | the GGML format's constants and the check a whisper file passes at every load |
//! | `whisper_ggml.rs` | the set-up-time converter of whisper from CTranslate2 to GGML |

pub mod ggml;
pub mod onnx;
pub mod whisper_ggml;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The embedding model (all-MiniLM-L6-v2, int8 ONNX).
pub const EMBED_MODEL: &str = "minilm-l6-v2-int8.onnx";
/// Its tokenizer.
pub const EMBED_TOKENIZER: &str = "minilm-l6-v2-tokenizer.json";
/// The ONNX Runtime shared library (from the onnxruntime wheel).
pub const ONNXRUNTIME_LIB: &str = "libonnxruntime.so.1.31.1";
/// Whisper tiny.en in GGML form, converted at set-up from the CTranslate2 file.
pub const WHISPER_TINY_EN: &str = "ggml-tiny.en.bin";
/// Whisper base (multilingual) in GGML form, converted at set-up from the CTranslate2 file.
pub const WHISPER_BASE: &str = "ggml-base.bin";

/// Silero VAD (voice activity), MIT, from PyPI `silero-vad`.
pub const SILERO_VAD: &str = "silero_vad.onnx";
/// Kokoro-82M v1.0 int8, with its padding durations capped (scripts/kokoro_graph.py).
pub const KOKORO_MODEL: &str = "kokoro-v1.0-umwelt.onnx";
/// Kokoro's phoneme vocabulary.
pub const KOKORO_VOCAB: &str = "kokoro-vocab.json";
/// Voices are `kokoro-voices/<id>.bin`.
pub const KOKORO_VOICES_PREFIX: &str = "kokoro-voices/";

const MANIFEST: &str = include_str!("../../models/manifest.tsv");

/// One line of the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEntry {
    pub name: String,
    pub source: String,
    pub size: u64,
    pub sha256: String,
}

/// The manifest compiled into this build.
pub fn manifest() -> Vec<ManifestEntry> {
    MANIFEST
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() == 5).then(|| ManifestEntry {
                name: f[0].to_string(),
                source: f[1].to_string(),
                size: f[3].parse().unwrap_or(0),
                sha256: f[4].to_string(),
            })
        })
        .collect()
}

fn entry(name: &str) -> Option<ManifestEntry> {
    manifest().into_iter().find(|e| e.name == name)
}

/// The folders searched for model files, in order.
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("UMWELT_MODELS_DIR") {
        dirs.push(PathBuf::from(d));
    }
    if let Some(c) = dirs::cache_dir() {
        dirs.push(c.join("umwelt").join("models"));
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(bin) = exe.parent() {
            dirs.push(bin.join("models"));
            // The .deb installs the app's resources under /usr/lib/umwelt/ beside /usr/bin.
            dirs.push(bin.join("../lib/umwelt/models"));
        }
    }
    dirs
}

/// Find a model file by its manifest name without checking its content.
pub fn locate(name: &str) -> Result<PathBuf> {
    let dirs = search_dirs();
    dirs.iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| Error::ModelMissing {
            name: name.to_string(),
            looked_in: dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Find a model file and check it against the manifest (once per process per path).
pub fn resolve(name: &str) -> Result<PathBuf> {
    let path = locate(name)?;
    verify(name, &path)?;
    Ok(path)
}

/// Files whose sha256 matched, as they were on disk when it did.
static VERIFIED: Mutex<Option<HashMap<PathBuf, Fingerprint>>> = Mutex::new(None);

/// What tells that a file on disk is still the one that was hashed: replacing, truncating or
/// rewriting it changes one of these.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64),
}

fn fingerprint(path: &Path) -> Result<Fingerprint> {
    let m = std::fs::metadata(path).map_err(Error::io(format!("reading {}", path.display())))?;
    Ok(Fingerprint {
        len: m.len(),
        modified: m.modified().ok(),
        #[cfg(unix)]
        inode: {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        },
    })
}

/// Check a file's size and sha256 against the manifest entry `name`. Hashed once while the file
/// stays the same on disk; hashed again when it changed.
pub fn verify(name: &str, path: &Path) -> Result<()> {
    let now = fingerprint(path)?;
    let verified = |map: &mut Option<HashMap<PathBuf, Fingerprint>>| {
        map.get_or_insert_with(HashMap::new).get(path) == Some(&now)
    };
    if verified(&mut VERIFIED.lock().unwrap_or_else(|p| p.into_inner())) {
        return Ok(());
    }
    let Some(e) = entry(name) else {
        return Err(Error::ModelCorrupt {
            path: path.into(),
            detail: format!("'{name}' is not in the model manifest"),
        });
    };
    let size = now.len;
    if size != e.size {
        return Err(Error::ModelCorrupt {
            path: path.into(),
            detail: format!("{size} bytes, expected {}", e.size),
        });
    }
    let actual = sha256_file(path)?;
    if actual != e.sha256 {
        return Err(Error::ModelCorrupt {
            path: path.into(),
            detail: format!("sha256 {actual}, expected {}", e.sha256),
        });
    }
    VERIFIED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(path.to_path_buf(), now);
    Ok(())
}

/// Hex sha256 of a file, streamed.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut f =
        std::fs::File::open(path).map_err(Error::io(format!("opening {}", path.display())))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(Error::io(format!("reading {}", path.display())))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Check every file the app loads at run time; returns one line per file.
pub fn check_all() -> Vec<(String, Result<PathBuf>)> {
    manifest()
        .into_iter()
        .filter(|e| !e.name.starts_with("src/"))
        .map(|e| {
            let r = resolve(&e.name);
            (e.name, r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_names_every_runtime_model() {
        let names: Vec<String> = manifest().into_iter().map(|e| e.name).collect();
        for n in [
            EMBED_MODEL,
            EMBED_TOKENIZER,
            ONNXRUNTIME_LIB,
            WHISPER_TINY_EN,
            WHISPER_BASE,
        ] {
            assert!(names.iter().any(|x| x == n), "{n} missing from manifest");
        }
        assert!(manifest()
            .iter()
            .all(|e| e.sha256.len() == 64 && e.size > 0));
    }

    #[test]
    fn a_wrong_file_is_reported_with_its_path_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(EMBED_TOKENIZER);
        std::fs::write(&p, b"{ not the tokenizer").unwrap();
        let err = verify(EMBED_TOKENIZER, &p).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::ModelCorrupt { .. }));
        assert!(
            msg.contains(&p.display().to_string()) && msg.contains("setup-models.sh"),
            "{msg}"
        );
    }
}
