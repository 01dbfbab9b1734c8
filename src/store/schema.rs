//! The file's schema, as numbered migrations kept in `PRAGMA user_version`.
//!
//! Migrations only ever append: a file made by any earlier release opens in a later one and is
//! brought forward in one transaction. The shape already speaks the holdings model of the second
//! seed: a *holder* (the first seed's scope) *holds* a *claim* (the text) since a time, with a
//! provenance; a user's memory is a claim authored by the user's holder.

use rusqlite::Connection;

use crate::embed::EMBED_DIM;
use crate::error::Result;

/// Each entry brings the file from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: holders, claims, holdings, full text and vectors.
    r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE holder (
        id         INTEGER PRIMARY KEY,
        name       TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
    );
    CREATE TABLE claim (
        id         INTEGER PRIMARY KEY,
        text       TEXT NOT NULL,
        kind       TEXT NOT NULL DEFAULT 'fact',
        created_at INTEGER NOT NULL,          -- unix milliseconds
        source     TEXT NOT NULL DEFAULT 'typed', -- typed | dictated
        audio_path TEXT                       -- the recording a dictated claim came from
    );
    CREATE TABLE holding (
        holder_id  INTEGER NOT NULL REFERENCES holder(id) ON DELETE CASCADE,
        claim_id   INTEGER NOT NULL REFERENCES claim(id) ON DELETE CASCADE,
        session    TEXT NOT NULL DEFAULT '',  -- the first seed's scope_key
        since      INTEGER NOT NULL,
        provenance TEXT NOT NULL DEFAULT 'authored', -- authored | told | witnessed
        PRIMARY KEY (holder_id, claim_id)
    ) WITHOUT ROWID;
    CREATE INDEX holding_by_since ON holding(holder_id, since DESC, claim_id DESC);
    CREATE INDEX holding_by_claim ON holding(claim_id);
    CREATE VIRTUAL TABLE claim_fts USING fts5(text, content='claim', content_rowid='id');
    CREATE VIRTUAL TABLE claim_vec USING vec0(
        holder_id INTEGER PARTITION KEY,
        session TEXT,
        embedding FLOAT[{EMBED_DIM}] distance_metric=cosine
    );
    "#,
    // 2: the conversation side of the first seed: history and the turn log; and which model
    //    made each claim's vector, so re-embedding can resume where it stopped.
    r#"
    CREATE TABLE message (
        id        INTEGER PRIMARY KEY,
        holder_id INTEGER NOT NULL REFERENCES holder(id) ON DELETE CASCADE,
        session   TEXT NOT NULL,
        role      TEXT NOT NULL,
        text      TEXT NOT NULL,
        at        INTEGER NOT NULL
    );
    CREATE INDEX message_by_session ON message(holder_id, session, id);
    CREATE TABLE turn (
        id         INTEGER PRIMARY KEY,
        holder_id  INTEGER NOT NULL REFERENCES holder(id) ON DELETE CASCADE,
        session    TEXT NOT NULL,
        at         INTEGER NOT NULL,
        user_text  TEXT NOT NULL,
        reply_text TEXT NOT NULL,
        stages     TEXT NOT NULL          -- JSON: [{"stage": "stt", "ms": 412.0}, ...]
    );
    CREATE INDEX turn_by_session ON turn(holder_id, session, id);
    ALTER TABLE claim ADD COLUMN embed_model TEXT NOT NULL DEFAULT '';
    "#,
    // 3: vectors move from sqlite-vec's vec0 table to a plain table. Recall reads them through
    //    the memory-resident index (or an exact scan with vec_distance_cosine when UMWELT_PERF=off),
    //    so vec0's KNN was never used, and its chunked storage made every insert and re-embed
    //    several times dearer (docs/PERFORMANCE.md: remember 0.271 -> 0.119 ms). The model
    //    marker moves with the vector.
    r#"
    CREATE TABLE claim_vector (
        claim_id  INTEGER PRIMARY KEY REFERENCES claim(id) ON DELETE CASCADE,
        holder_id INTEGER NOT NULL,           -- the holder whose index holds it (the author)
        session   TEXT NOT NULL,
        model     TEXT NOT NULL,              -- the embedding model that made it
        embedding BLOB NOT NULL               -- {EMBED_DIM} little-endian f32, unit length
    );
    CREATE INDEX claim_vector_by_holder ON claim_vector(holder_id, session);
    INSERT INTO claim_vector(claim_id, holder_id, session, model, embedding)
        SELECT v.rowid, v.holder_id, v.session, c.embed_model, v.embedding FROM claim_vec v JOIN claim c ON c.id = v.rowid;
    DROP TABLE claim_vec;
    ALTER TABLE claim DROP COLUMN embed_model;
    "#,
    // 4: a recording belongs to at most one claim; saving a draft twice (a retry after a crash,
    // two windows) finds the claim the first save made.
    r#"
    CREATE INDEX claim_by_audio ON claim(audio_path) WHERE audio_path IS NOT NULL;
    "#,
    // 5: edits keep what they replaced: each earlier text of a claim, and when it was replaced.
    r#"
    CREATE TABLE claim_version (
        id        INTEGER PRIMARY KEY,
        claim_id  INTEGER NOT NULL REFERENCES claim(id) ON DELETE CASCADE,
        text      TEXT NOT NULL,               -- the text before the edit
        edited_at INTEGER NOT NULL             -- when the edit replaced it (unix ms)
    );
    CREATE INDEX claim_version_by_claim ON claim_version(claim_id, id);
    "#,
    // 6: the memory browser lists one session's memories newest first, a page at a time.
    r#"
    CREATE INDEX holding_by_session ON holding(holder_id, session, since DESC, claim_id DESC);
    "#,
    // 7: how many notes hold each word (FTS5's own index, read through fts5vocab): search leaves
    //    words that are in very many notes out of its ranked list of word matches.
    r#"
    CREATE VIRTUAL TABLE claim_fts_vocab USING fts5vocab(claim_fts, 'row');
    "#,
    // 8: who holds what (the second seed). A holding gains a strength and, when it was told, its
    //    teller; a claim is about entities, and was made in a draft until that draft reaches main.
    //    `holding_about` is an index kept by triggers: the holdings about an entity, newest first,
    //    read as one range instead of a join and a sort. A holding can stand at a position on a
    //    named axis. A draft is an overlay on main or on another draft: its rows put or retract
    //    holdings, and reads through it see main, then each ancestor, then its own.
    r#"
    ALTER TABLE holding ADD COLUMN strength REAL NOT NULL DEFAULT 1.0;
    ALTER TABLE holding ADD COLUMN teller INTEGER REFERENCES holder(id);
    ALTER TABLE claim ADD COLUMN draft_id INTEGER REFERENCES draft(id);
    CREATE TABLE entity (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
    CREATE TABLE claim_about (
        claim_id  INTEGER NOT NULL REFERENCES claim(id) ON DELETE CASCADE,
        entity_id INTEGER NOT NULL REFERENCES entity(id),
        PRIMARY KEY (claim_id, entity_id)
    ) WITHOUT ROWID;
    CREATE INDEX claim_about_by_entity ON claim_about(entity_id, claim_id);
    CREATE TABLE holding_about (
        entity_id INTEGER NOT NULL,
        since     INTEGER NOT NULL,
        holder_id INTEGER NOT NULL,
        claim_id  INTEGER NOT NULL,
        PRIMARY KEY (entity_id, since, holder_id, claim_id)
    ) WITHOUT ROWID;
    CREATE TRIGGER holding_about_put AFTER INSERT ON holding BEGIN
        INSERT INTO holding_about(entity_id, since, holder_id, claim_id)
            SELECT entity_id, NEW.since, NEW.holder_id, NEW.claim_id FROM claim_about WHERE claim_id = NEW.claim_id;
    END;
    CREATE TRIGGER holding_about_drop AFTER DELETE ON holding BEGIN
        DELETE FROM holding_about WHERE since = OLD.since AND holder_id = OLD.holder_id AND claim_id = OLD.claim_id
            AND entity_id IN (SELECT entity_id FROM claim_about WHERE claim_id = OLD.claim_id);
        DELETE FROM holding_axis WHERE holder_id = OLD.holder_id AND claim_id = OLD.claim_id;
    END;
    -- A claim deleted may lose its entities before its holdings (cascades run in no set order):
    -- their rows go with the entity, found in its range (no index by claim: a third fewer pages
    -- written per holding, and only deleting a claim pays).
    CREATE TRIGGER holding_about_unabout AFTER DELETE ON claim_about BEGIN
        DELETE FROM holding_about WHERE entity_id = OLD.entity_id AND claim_id = OLD.claim_id;
    END;
    CREATE TABLE holding_axis (
        holder_id INTEGER NOT NULL,
        claim_id  INTEGER NOT NULL,
        axis      TEXT NOT NULL,
        pos       INTEGER NOT NULL,
        PRIMARY KEY (holder_id, claim_id, axis)
    ) WITHOUT ROWID;
    CREATE TABLE draft (
        id         INTEGER PRIMARY KEY,
        parent     INTEGER REFERENCES draft(id),
        state      TEXT NOT NULL DEFAULT 'open',  -- open | merged | discarded
        created_at INTEGER NOT NULL
    );
    CREATE TABLE draft_holding (
        draft_id   INTEGER NOT NULL REFERENCES draft(id),
        holder_id  INTEGER NOT NULL REFERENCES holder(id),
        claim_id   INTEGER NOT NULL REFERENCES claim(id) ON DELETE CASCADE,
        retracted  INTEGER NOT NULL DEFAULT 0,
        session    TEXT NOT NULL DEFAULT '',
        since      INTEGER NOT NULL,
        provenance TEXT NOT NULL DEFAULT 'authored',
        teller     INTEGER,
        strength   REAL NOT NULL DEFAULT 1.0,
        axes       TEXT NOT NULL DEFAULT '{}',   -- JSON {"axis": position}
        PRIMARY KEY (draft_id, holder_id, claim_id)
    ) WITHOUT ROWID;
    CREATE INDEX draft_holding_by_claim ON draft_holding(claim_id);
    "#,
    // 9: an unsaved dictation is a draft of the user's holder, named after its recording, so the
    //    recordings folder and the file can be matched after a crash; once saved, the draft says
    //    which memory it became (a save repeated finds it).
    r#"
    ALTER TABLE draft ADD COLUMN name TEXT;
    ALTER TABLE draft ADD COLUMN saved_as INTEGER;
    CREATE UNIQUE INDEX draft_by_name ON draft(name) WHERE name IS NOT NULL;
    "#,
];

/// The version a file has once [`migrate`] has run.
pub const CURRENT_VERSION: usize = MIGRATIONS.len();

fn user_version(conn: &Connection) -> Result<usize> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))? as usize)
}

/// Bring the file up to [`CURRENT_VERSION`]. Refuses a file from a newer release.
pub(super) fn migrate(conn: &mut Connection) -> Result<()> {
    let version = user_version(conn)?;
    if version > CURRENT_VERSION {
        return Err(crate::Error::InvalidInput(format!(
            "this memory file was written by a newer Umwelt (schema {version}, this build knows {CURRENT_VERSION}); update Umwelt to open it"
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        let tx = super::write_tx(conn)?;
        // Another process opening the file at the same time may have run this one since the
        // version was read: read it again under the write lock (dropping `tx` writes nothing).
        if user_version(&tx)? > i {
            continue;
        }
        tx.execute_batch(&sql.replace("{EMBED_DIM}", &EMBED_DIM.to_string()))?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}
