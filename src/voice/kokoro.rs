//! Kokoro-82M on ONNX Runtime: phoneme symbols in, 24 kHz audio out.
//!
//! Inputs: `tokens` int64 [1, n+2] = [0, ids…, 0] with at most [`MAX_IDS`] ids; `style` f32
//! [1, 256], the voice's row at index n; `speed` f32 [1]. Output `audio`, f32 at 24 kHz.
//! The graph Umwelt runs is the published int8 export with the two padding tokens' durations
//! capped (see `scripts/kokoro_graph.py`); a run can be cancelled from another thread.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ort::session::{RunOptions, Session};
use ort::value::Tensor;

use crate::error::{Error, Result};
use crate::{models, optimisations};

/// Output sample rate.
pub const SAMPLE_RATE: u32 = 24_000;
/// Most phoneme ids one run takes (the style table has 510 rows).
pub const MAX_IDS: usize = 510;
const STYLE_DIM: usize = 256;
const STYLE_ROWS: usize = 510;

/// The loaded model and its phoneme vocabulary.
pub struct Kokoro {
    session: Mutex<Session>,
    vocab: HashMap<char, i64>,
}

fn load_err(e: impl std::fmt::Display) -> Error {
    Error::ModelLoad {
        name: models::KOKORO_MODEL.into(),
        detail: e.to_string(),
    }
}

impl Kokoro {
    /// Load the model and vocabulary the resolver finds (verified against the manifest).
    pub fn load() -> Result<Kokoro> {
        Kokoro::load_from(
            &models::resolve(models::KOKORO_MODEL)?,
            &models::resolve(models::KOKORO_VOCAB)?,
        )
    }

    /// Load from explicit paths (no manifest check).
    pub fn load_from(model: &Path, vocab: &Path) -> Result<Kokoro> {
        let text = std::fs::read_to_string(vocab)
            .map_err(Error::io(format!("reading {}", vocab.display())))?;
        let vocab = parse_vocab(&text).map_err(|detail| Error::ModelCorrupt {
            path: vocab.into(),
            detail,
        })?;
        let session = models::onnx::ort_session(model, models::KOKORO_MODEL)?;
        Ok(Kokoro {
            session: Mutex::new(session),
            vocab,
        })
    }

    /// Phoneme symbols → ids; symbols outside the vocabulary are dropped.
    pub fn tokenize(&self, phonemes: &str) -> Vec<i64> {
        phonemes
            .chars()
            .filter_map(|c| self.vocab.get(&c).copied())
            .collect()
    }

    /// Synthesise up to [`MAX_IDS`] ids. `cancel`, when given, stops the run from another thread
    /// ([`RunOptions::terminate`]); a cancelled run returns [`Error::Cancelled`].
    pub fn synthesize(
        &self,
        ids: &[i64],
        voice: &VoiceStyle,
        speed: f32,
        cancel: Option<&RunOptions>,
    ) -> Result<Vec<f32>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        if ids.len() > MAX_IDS {
            return Err(Error::InvalidInput(format!(
                "a phrase of {} phonemes is longer than the voice takes ({MAX_IDS})",
                ids.len()
            )));
        }
        let mut tokens = Vec::with_capacity(ids.len() + 2);
        tokens.push(0);
        tokens.extend_from_slice(ids);
        tokens.push(0);
        let n = tokens.len();
        let inputs = ort::inputs![
            "tokens" => Tensor::from_array(([1usize, n], tokens)).map_err(load_err)?,
            "style" => Tensor::from_array(([1usize, STYLE_DIM], voice.row(ids.len()).to_vec())).map_err(load_err)?,
            "speed" => Tensor::from_array(([1usize], vec![speed.clamp(0.5, 2.0)])).map_err(load_err)?,
        ];
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let outputs = match cancel {
            Some(opts) => session.run_with_options(inputs, opts),
            None => session.run(inputs),
        };
        let outputs = outputs.map_err(|e| {
            if e.to_string().contains("terminate") {
                Error::Cancelled
            } else {
                load_err(e)
            }
        })?;
        let (_, audio) = outputs["audio"]
            .try_extract_tensor::<f32>()
            .map_err(load_err)?;
        Ok(audio.to_vec())
    }
}

impl Kokoro {
    /// Give back the working memory the last runs grew: ONNX Runtime's arena keeps the largest
    /// phrase's buffers (~67 MiB after a five-second sentence, measured) for the next run, and
    /// would hold them while the user dictates. A run of one phoneme with the arena's shrinkage
    /// on frees every region it does not use, then glibc returns them
    /// ([`optimisations::release_freed_memory`]). About a phoneme's synthesis; call it after the
    /// last phrase, while it plays. Nothing with `UMWELT_PERF=off`.
    pub fn release_working_memory(&self, voice: &VoiceStyle) -> Result<()> {
        if !optimisations::enabled() {
            return Ok(());
        }
        let mut shrink = RunOptions::new().map_err(load_err)?;
        shrink
            .set("memory.enable_memory_arena_shrinkage", "cpu:0")
            .map_err(load_err)?;
        // Any one symbol will do; the vocabulary has at least 50.
        let ids: Vec<i64> = self.vocab.values().min().copied().into_iter().collect();
        self.synthesize(&ids, voice, 1.0, Some(&shrink))?;
        optimisations::release_freed_memory();
        Ok(())
    }
}

fn parse_vocab(text: &str) -> std::result::Result<HashMap<char, i64>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let map = v
        .get("vocab")
        .and_then(|m| m.as_object())
        .ok_or("no \"vocab\" object")?;
    let mut out = HashMap::new();
    for (k, id) in map {
        let mut chars = k.chars();
        if let (Some(c), None, Some(id)) = (chars.next(), chars.next(), id.as_i64()) {
            out.insert(c, id);
        }
    }
    if out.len() < 50 {
        return Err(format!("only {} symbols; expected Kokoro's 114", out.len()));
    }
    Ok(out)
}

/// A voice: 510 style vectors, one per phrase length.
pub struct VoiceStyle {
    pub id: String,
    rows: Vec<f32>,
}

impl VoiceStyle {
    /// Load a voice by id (`af_heart`) from the model folders, verified against the manifest.
    pub fn load(id: &str) -> Result<VoiceStyle> {
        if !voices().iter().any(|v| v.id == id) {
            let known: Vec<String> = voices().into_iter().map(|v| v.id).collect();
            return Err(Error::InvalidInput(format!(
                "there is no voice '{id}'; the voices are: {}",
                known.join(", ")
            )));
        }
        VoiceStyle::load_from(id, &models::resolve(&voice_file(id))?)
    }

    /// Load a voice file (raw little-endian f32 [510, 256]).
    pub fn load_from(id: &str, path: &Path) -> Result<VoiceStyle> {
        let bytes = std::fs::read(path).map_err(Error::io(format!(
            "reading the voice file {}",
            path.display()
        )))?;
        if bytes.len() != STYLE_ROWS * STYLE_DIM * 4 {
            return Err(Error::ModelCorrupt {
                path: PathBuf::from(path),
                detail: format!(
                    "{} bytes, a voice is {}",
                    bytes.len(),
                    STYLE_ROWS * STYLE_DIM * 4
                ),
            });
        }
        let rows = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok(VoiceStyle {
            id: id.to_string(),
            rows,
        })
    }

    fn row(&self, n: usize) -> &[f32] {
        let i = n.min(STYLE_ROWS - 1);
        &self.rows[i * STYLE_DIM..(i + 1) * STYLE_DIM]
    }
}

/// A voice the user can choose.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct VoiceInfo {
    /// `af_heart`
    pub id: String,
    /// `Heart`
    pub name: String,
    /// `American` or `British`
    pub accent: String,
    /// `female` or `male`
    pub gender: String,
}

pub(super) fn voice_file(id: &str) -> String {
    format!("{}{id}.bin", models::KOKORO_VOICES_PREFIX)
}

/// Every voice the manifest pins, in manifest order.
pub fn voices() -> Vec<VoiceInfo> {
    models::manifest()
        .into_iter()
        .filter_map(|e| {
            e.name
                .strip_prefix(models::KOKORO_VOICES_PREFIX)
                .and_then(|n| n.strip_suffix(".bin"))
                .map(str::to_string)
        })
        .map(|id| {
            let mut name: Vec<char> = id.get(3..).unwrap_or("").chars().collect();
            if let Some(c) = name.first_mut() {
                *c = c.to_ascii_uppercase();
            }
            VoiceInfo {
                accent: if id.starts_with('b') {
                    "British"
                } else {
                    "American"
                }
                .into(),
                gender: if id.as_bytes().get(1) == Some(&b'm') {
                    "male"
                } else {
                    "female"
                }
                .into(),
                name: name.into_iter().collect(),
                id,
            }
        })
        .collect()
}
