//! Reading Umwelt's JSON export: parsed as a stream (one memory at a time, never the whole file
//! as a tree), and every memory checked as it comes, so a bad one is skipped with its reason
//! before any embedding starts, instead of failing the whole import minutes later.

use std::fmt;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserializer;

use super::{Export, ExportedMemory, EXPORT_FORMAT};
use crate::error::{Error, Result};
use crate::store::MAX_TEXT_BYTES;

/// The longest holder (scope) or session name an import takes, in bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// The longest source (`typed`, `dictated`, …) an import takes, in bytes.
pub const MAX_SOURCE_BYTES: usize = 64;
/// The most earlier versions one imported memory may bring.
pub const MAX_VERSIONS: usize = 1000;
/// The longest recording path an import takes, in bytes.
const MAX_PATH_BYTES: usize = 4096;

/// Why `m` cannot be stored as it is, if it cannot: what [`crate::Store`] would refuse, found
/// before anything is embedded.
pub fn check(m: &ExportedMemory) -> std::result::Result<(), String> {
    let text = |t: &str, what: &str| {
        let t = t.trim();
        if t.is_empty() {
            Err(format!("{what} is empty"))
        } else if t.len() > MAX_TEXT_BYTES {
            Err(format!(
                "{what} is {} KiB; a memory holds at most {} KiB: split it into several notes",
                t.len() / 1024,
                MAX_TEXT_BYTES / 1024
            ))
        } else {
            Ok(())
        }
    };
    let name = |v: &str, what: &str, max: usize| {
        if v.len() > max {
            Err(format!(
                "its {what} is {} bytes long; at most {max} are taken",
                v.len()
            ))
        } else if v.chars().any(char::is_control) {
            Err(format!("its {what} holds control characters"))
        } else {
            Ok(())
        }
    };
    text(&m.text, "its text")?;
    name(&m.scope, "holder (scope)", MAX_NAME_BYTES)?;
    name(&m.session, "session", MAX_NAME_BYTES)?;
    name(&m.source, "source", MAX_SOURCE_BYTES)?;
    if let Some(a) = &m.audio_path {
        name(a, "recording's path", MAX_PATH_BYTES)?;
    }
    if m.versions.len() > MAX_VERSIONS {
        return Err(format!(
            "it has {} earlier versions; at most {MAX_VERSIONS} are taken",
            m.versions.len()
        ));
    }
    for v in &m.versions {
        text(&v.text, "an earlier version")?;
    }
    Ok(())
}

/// Read a JSON export from `reader`: each memory, or why it cannot be imported. An error is
/// the whole file: not JSON, not an export, or an export in another format.
pub fn read_export(
    reader: impl std::io::Read,
) -> Result<Vec<std::result::Result<ExportedMemory, String>>> {
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader));
    let top = de
        .deserialize_map(TopVisitor)
        .and_then(|top| de.end().map(|()| top))
        .map_err(|e| Error::InvalidInput(format!("not an Umwelt export: {e}")))?;
    match top.format.as_deref() {
        Some(EXPORT_FORMAT) => Ok(top.memories),
        Some(other) => Err(Error::InvalidInput(format!(
            "an export in the format '{other}', which this Umwelt does not read (it reads {EXPORT_FORMAT})"
        ))),
        None => Err(Error::InvalidInput(
            "not an Umwelt export: it has no \"format\"".into(),
        )),
    }
}

/// Read a JSON export whole; any memory that cannot be imported is an error naming it.
pub fn parse_export(json: &[u8]) -> Result<Export> {
    let memories = read_export(json)?
        .into_iter()
        .enumerate()
        .map(|(i, m)| m.map_err(|why| Error::InvalidInput(format!("memory {}: {why}", i + 1))))
        .collect::<Result<_>>()?;
    let exported_at = serde_json::from_slice::<serde_json::Value>(json)
        .ok()
        .and_then(|v| v.get("exported_at").and_then(|t| t.as_i64()))
        .unwrap_or(0);
    Ok(Export {
        format: EXPORT_FORMAT.into(),
        exported_at,
        memories,
    })
}

struct Top {
    format: Option<String>,
    memories: Vec<std::result::Result<ExportedMemory, String>>,
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object with \"format\" and \"memories\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Top, A::Error> {
        let mut top = Top {
            format: None,
            memories: Vec::new(),
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => top.format = Some(map.next_value()?),
                "memories" => map.next_value_seed(Memories(&mut top.memories))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(top)
    }
}

/// The `memories` array, one element at a time: each is taken as its JSON text (no tree: a
/// memory costs about what its text does, whatever fields or nesting it brings), then read as a
/// memory (unknown fields skipped), then checked; a wrong one is its reason, and the next one
/// is read.
struct Memories<'a>(&'a mut Vec<std::result::Result<ExportedMemory, String>>);

impl<'de> DeserializeSeed<'de> for Memories<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Memories<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of memories")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        while let Some(raw) = seq.next_element::<Box<serde_json::value::RawValue>>()? {
            self.0.push(
                serde_json::from_str::<ExportedMemory>(raw.get())
                    .map_err(|e| format!("not a memory: {e}"))
                    .and_then(|m| check(&m).map(|()| m)),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(text: &str) -> serde_json::Value {
        serde_json::json!({"id": 1, "text": text, "scope": "me", "session": "", "created_at": 5,
                           "source": "typed", "audio_path": null})
    }

    #[test]
    fn a_bad_memory_is_skipped_with_its_reason_and_the_others_come_through() {
        let long = "x".repeat(MAX_TEXT_BYTES + 1);
        let mut too_long_scope = memory("fine");
        too_long_scope["scope"] = serde_json::json!("s".repeat(MAX_NAME_BYTES + 1));
        let json = serde_json::json!({
            "memories": [memory("first"), memory(""), memory(&long), {"text": 3},
                         too_long_scope, memory("last")],
            "exported_at": 9,
            "format": EXPORT_FORMAT,
        });
        let got = read_export(json.to_string().as_bytes()).unwrap();
        assert_eq!(got.len(), 6);
        assert_eq!(got[0].as_ref().unwrap().text, "first");
        assert!(
            got[1].as_ref().unwrap_err().contains("empty"),
            "{:?}",
            got[1]
        );
        assert!(got[2].as_ref().unwrap_err().contains("KiB"), "{:?}", got[2]);
        assert!(
            got[3].as_ref().unwrap_err().contains("not a memory"),
            "{:?}",
            got[3]
        );
        assert!(
            got[4].as_ref().unwrap_err().contains("holder"),
            "{:?}",
            got[4]
        );
        assert_eq!(got[5].as_ref().unwrap().text, "last");
        assert!(parse_export(json.to_string().as_bytes()).is_err());
    }

    #[test]
    fn the_limits_on_versions_and_names_are_kept_and_unknown_fields_cost_nothing() {
        let version = |t: &str| serde_json::json!({"id": 1, "text": t, "edited_at": 2});
        let mut many = memory("many versions");
        many["versions"] = (0..=MAX_VERSIONS).map(|_| version("old")).collect();
        let mut empty_version = memory("an empty version");
        empty_version["versions"] = serde_json::json!([version(" ")]);
        let mut source = memory("a long source");
        source["source"] = serde_json::json!("s".repeat(MAX_SOURCE_BYTES + 1));
        let mut control = memory("a session with a control character");
        control["session"] = serde_json::json!("a\u{7}b");
        // A field this Umwelt does not know, deeply nested: skipped, not built as a tree.
        let mut extra = memory("unknown fields");
        let mut deep = serde_json::json!(1);
        for _ in 0..100 {
            deep = serde_json::json!([deep]);
        }
        extra["from_a_newer_umwelt"] = deep;
        let json = serde_json::json!({
            "format": EXPORT_FORMAT,
            "memories": [many, empty_version, source, control, extra],
        });
        let got = read_export(json.to_string().as_bytes()).unwrap();
        assert!(
            got[0].as_ref().unwrap_err().contains("versions"),
            "{:?}",
            got[0]
        );
        assert!(
            got[1].as_ref().unwrap_err().contains("earlier version"),
            "{:?}",
            got[1]
        );
        assert!(
            got[2].as_ref().unwrap_err().contains("source"),
            "{:?}",
            got[2]
        );
        assert!(
            got[3].as_ref().unwrap_err().contains("control"),
            "{:?}",
            got[3]
        );
        assert_eq!(got[4].as_ref().unwrap().text, "unknown fields");
    }

    #[test]
    fn another_format_or_no_export_is_an_error_for_the_whole_file() {
        let other = serde_json::json!({"format": "umwelt-export/9", "memories": []});
        let e = read_export(other.to_string().as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("umwelt-export/9"), "{e}");
        for bad in [
            "[1, 2]",
            "{\"memories\": []}",
            "{\"format\": \"umwelt-export/1\"",
            "nul",
        ] {
            assert!(read_export(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
