//! One Markdown file per memory, readable as it is and by note apps (Obsidian reads the front
//! matter as properties):
//!
//! ```text
//! ---
//! created: 2026-12-01T15:41:45.120Z
//! scope: me
//! session: ""
//! source: dictated
//! audio: "/home/ana/.local/share/umwelt/recordings/1796139951013.wav"
//! umwelt_id: 12
//! ---
//! buy oat milk
//! ```
//!
//! Reading a file back takes the same front matter (any of it may be missing), a byte-order mark
//! and CRLF line ends.

use super::ExportedMemory;
use crate::store::DEFAULT_SCOPE;

/// A memory as Markdown.
pub fn render(m: &ExportedMemory) -> String {
    let mut s = String::from("---\n");
    s += &format!("created: {}\n", iso8601(m.created_at));
    s += &format!("scope: {}\n", quote(&m.scope));
    s += &format!("session: {}\n", quote(&m.session));
    s += &format!("source: {}\n", quote(&m.source));
    if let Some(a) = &m.audio_path {
        s += &format!("audio: {}\n", quote(a));
    }
    s += &format!("umwelt_id: {}\n", m.id);
    s += "---\n";
    s += &m.text;
    s += "\n";
    s
}

/// A file name for it: its date and time, the first words, and its id (unique in a folder).
pub fn file_name(m: &ExportedMemory) -> String {
    let date: String = iso8601(m.created_at)
        .chars()
        .take(16)
        .map(|c| if c == ':' || c == 'T' { '-' } else { c })
        .collect();
    let slug: String = m
        .text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(6)
        .collect::<Vec<_>>()
        .join("-")
        .to_lowercase()
        .chars()
        .take(48)
        .collect();
    format!("{date} {slug} {}.md", m.id)
}

/// What a note file says: its text and whatever front matter it has.
#[derive(Debug, Default, PartialEq)]
pub struct Note {
    pub text: String,
    pub created_at: Option<i64>,
    pub scope: Option<String>,
    pub session: Option<String>,
    pub source: Option<String>,
    pub audio_path: Option<String>,
}

/// Read a note (UTF-8 text, a BOM and CRLF allowed); front matter only between `---` lines at
/// the very start.
pub fn parse(text: &str) -> Note {
    let text = text
        .strip_prefix('\u{feff}')
        .unwrap_or(text)
        .replace("\r\n", "\n");
    let mut note = Note::default();
    let body = match text.strip_prefix("---\n").and_then(|rest| {
        let end = rest
            .find("\n---\n")
            .map(|e| (e, e + 5))
            .or_else(|| rest.strip_suffix("\n---").map(|r| (r.len(), rest.len())))?;
        Some((&rest[..end.0], &rest[end.1..]))
    }) {
        Some((front, body)) => {
            for line in front.lines() {
                let Some((key, value)) = line.split_once(':') else {
                    continue;
                };
                let value = unquote(value.trim());
                match key.trim() {
                    "created" => note.created_at = parse_iso8601(&value),
                    "scope" => note.scope = Some(value),
                    "session" => note.session = Some(value),
                    "source" => note.source = Some(value),
                    "audio" => note.audio_path = Some(value),
                    _ => {}
                }
            }
            body.to_string()
        }
        None => text,
    };
    note.text = body.trim().to_string();
    if note.scope.as_deref() == Some("") {
        note.scope = Some(DEFAULT_SCOPE.into());
    }
    note
}

/// A YAML double-quoted string.
fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => q += "\\\"",
            '\\' => q += "\\\\",
            '\n' => q += "\\n",
            c => q.push(c),
        }
    }
    q + "\""
}

fn unquote(s: &str) -> String {
    let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Unix ms as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC).
pub fn iso8601(ms: i64) -> String {
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.mmm]]` with an optional `Z` (UTC) as unix ms.
pub fn parse_iso8601(s: &str) -> Option<i64> {
    let s = s.trim().trim_end_matches('Z');
    let (date, time) = s.split_once(['T', ' ']).unwrap_or((s, "00:00"));
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, dd) = (d.next()??, d.next()??, d.next()??);
    // Years a note can be from (a wider one would overflow the milliseconds).
    if !(0..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&dd) {
        return None;
    }
    let mut t = time.splitn(3, ':');
    let h: i64 = t.next()?.parse().ok()?;
    let min: i64 = t.next().unwrap_or("0").parse().ok()?;
    let sec: f64 = t.next().unwrap_or("0").parse().ok()?;
    if !(0..24).contains(&h) || !(0..60).contains(&min) || !(0.0..61.0).contains(&sec) {
        return None;
    }
    Some(
        days_from_civil(y, m, dd) * 86_400_000
            + h * 3_600_000
            + min * 60_000
            + (sec * 1000.0).round() as i64,
    )
}

// Howard Hinnant's algorithms (public domain): days since 1970-01-01 <-> civil dates.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_year_out_of_range_is_no_date_not_an_overflow() {
        assert_eq!(parse_iso8601("9223372036854775807-01-01"), None);
        assert_eq!(parse_iso8601("-9223372036854775807-01-01"), None);
        assert_eq!(parse_iso8601("10000-01-01"), None);
        assert_eq!(parse_iso8601("1970-01-01"), Some(0));
        assert_eq!(parse_iso8601("9999-12-31T23:59").map(|t| t > 0), Some(true));
        let note = parse("---\ncreated: 9223372036854775807-12-31\n---\nhello\n");
        assert_eq!((note.created_at, note.text.as_str()), (None, "hello"));
    }

    #[test]
    fn a_memory_goes_to_markdown_and_back() {
        let m = ExportedMemory {
            id: 12,
            text: "buy \"oat\" milk\n\nand bread".into(),
            scope: "me".into(),
            session: "kitchen: list".into(),
            created_at: 1_796_139_951_013,
            source: "dictated".into(),
            audio_path: Some("/tmp/a b/1.wav".into()),
            versions: vec![],
        };
        let md = render(&m);
        assert!(md.starts_with("---\ncreated: 2026-12-01T"), "{md}");
        let back = parse(&md);
        assert_eq!(back.text, m.text);
        assert_eq!(back.created_at, Some(m.created_at));
        assert_eq!(back.session.as_deref(), Some("kitchen: list"));
        assert_eq!(back.source.as_deref(), Some("dictated"));
        assert_eq!(back.audio_path.as_deref(), Some("/tmp/a b/1.wav"));
        // A BOM and CRLF, as Windows editors write.
        let crlf = format!("\u{feff}{}", md.replace('\n', "\r\n"));
        assert_eq!(parse(&crlf).text, m.text);
        assert!(
            file_name(&m).ends_with(" buy-oat-milk-and-bread 12.md"),
            "{}",
            file_name(&m)
        );
    }

    #[test]
    fn dates_round_trip_and_plain_notes_have_no_front_matter() {
        for ms in [0, 1_796_139_951_013, 951_782_400_000, -86_400_000] {
            assert_eq!(parse_iso8601(&iso8601(ms)), Some(ms), "{}", iso8601(ms));
        }
        assert_eq!(parse_iso8601("2024-02-29"), Some(1_709_164_800_000));
        assert_eq!(parse_iso8601("2024-13-01"), None);
        assert_eq!(parse("just a note\n").text, "just a note");
        assert_eq!(parse("---\nnot front matter").text, "---\nnot front matter");
    }
}
