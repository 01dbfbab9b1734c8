//! Re-embedding: the memories whose vector an older model made get a new one, batch by batch,
//! each batch its own transaction, so an interrupted run resumes where it stopped.

use std::sync::atomic::{AtomicBool, Ordering};

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{f32_bytes, write_tx, Store};
use crate::embed::EMBED_DIM;
use crate::error::{Error, Result};

/// Progress of re-embedding, for a UI to show.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct ReembedProgress {
    pub done: usize,
    pub total: usize,
}

impl Store {
    /// How many memories have a vector made by another model than `model`.
    pub fn stale_embeddings(&self, model: &str) -> Result<usize> {
        let n: i64 = self.conn().query_row(
            "SELECT count(*) FROM claim_vector WHERE model <> ?1",
            [model],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// Re-embed every memory whose vector was made by another model than `model`, in batches of
    /// `batch`, each batch its own transaction, so an interrupted run resumes where it stopped.
    /// `progress` is called after every batch; `cancel` stops between batches.
    pub fn reembed_all(
        &self,
        model: &str,
        batch: usize,
        embed: &dyn Fn(&[&str]) -> Result<Vec<Vec<f32>>>,
        progress: &mut dyn FnMut(ReembedProgress),
        cancel: &AtomicBool,
    ) -> Result<ReembedProgress> {
        let total = self.stale_embeddings(model)?;
        let mut p = ReembedProgress { done: 0, total };
        progress(p);
        while !cancel.load(Ordering::Relaxed) {
            let rows: Vec<(i64, String)> = {
                let conn = self.conn();
                let mut st = conn.prepare_cached(
                    "SELECT v.claim_id, c.text FROM claim_vector v JOIN claim c ON c.id = v.claim_id WHERE v.model <> ?1 ORDER BY v.claim_id LIMIT ?2",
                )?;
                let rows = st.query_map(params![model, batch.max(1) as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            if rows.is_empty() {
                break;
            }
            let texts: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
            let vectors = embed(&texts)?;
            if vectors.len() != rows.len() || vectors.iter().any(|v| v.len() != EMBED_DIM) {
                return Err(Error::InvalidInput(
                    "the embedder returned the wrong number or width of vectors".into(),
                ));
            }
            {
                let mut conn = self.conn();
                let tx = write_tx(&mut conn)?;
                let mut holders = Vec::with_capacity(rows.len());
                {
                    let mut up = tx.prepare_cached("UPDATE claim_vector SET embedding = ?2, model = ?3 WHERE claim_id = ?1 RETURNING holder_id")?;
                    for ((id, _), v) in rows.iter().zip(&vectors) {
                        holders.push(
                            up.query_row(params![id, f32_bytes(v), model], |r| r.get::<_, i64>(0))?,
                        );
                    }
                }
                tx.commit()?;
                drop(conn);
                // Loaded indexes take the new vectors in place.
                let mut indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
                for (((id, _), v), holder) in rows.iter().zip(&vectors).zip(&holders) {
                    if let Some(idx) = indexes.get_mut(holder) {
                        if let Err(e) = idx.update_vector(*id, v) {
                            super::index::drop_failed(&mut indexes, *holder, e);
                        }
                    }
                }
            }
            p.done += rows.len();
            progress(p);
        }
        Ok(p)
    }
}
