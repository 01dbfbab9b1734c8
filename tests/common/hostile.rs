//! Hostile input for the fuzz tests (`tests/it/fuzz.rs`, and the IPC fuzz on the mock runtime in
//! `src-tauri/tests/commands.rs`): deterministic from a seed, so a failure names its case and
//! reproduces. Strings with NUL, controls, quotes, FTS5 syntax, right-to-left marks and emoji;
//! bytes that are not UTF-8; numbers that are huge, negative, fractional or not numbers; mutations
//! of a valid input (bits flipped, bytes cut, inserted, repeated); and now and then a 10 MB string.
#![allow(dead_code)]

use serde_json::{json, Value};

/// How many cases each parser gets: `UMWELT_FUZZ_CASES`, or `default` (the CI-sized run).
pub(crate) fn cases(default: usize) -> usize {
    std::env::var("UMWELT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Every this-many cases, a string is 10 MB.
pub(crate) const HUGE_EVERY: usize = 100_000;

const PIECES: &[&str] = &[
    "\0",
    "\u{1}",
    "\u{7f}",
    "\n",
    "\r\n",
    "\t",
    "\"",
    "'",
    "\\",
    "*",
    "NEAR(",
    ")",
    "(",
    " OR ",
    " AND ",
    " NOT ",
    "-",
    ":",
    "^",
    "{",
    "}",
    "[",
    "]",
    "\u{202e}",
    "\u{200b}",
    "\u{feff}",
    "é",
    "ß",
    "日本語",
    "🦀",
    "👩‍👩‍👧",
    "a\u{301}",
    "%s",
    "%n",
    "${x}",
    "<script>",
    "';--",
    "../",
    "/",
    "milk",
    "buy",
    " ",
    "  ",
    "0",
    "-1",
    "1e309",
    "NaN",
    "null",
    "true",
];

pub(crate) struct Hostile(u64);

impl Hostile {
    pub(crate) fn new(seed: u64) -> Hostile {
        Hostile(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub(crate) fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    /// A hostile string; case `i` of a run (every [`HUGE_EVERY`]th is 10 MB).
    pub(crate) fn string(&mut self, i: usize) -> String {
        if i % HUGE_EVERY == HUGE_EVERY - 1 {
            return "é\0x".repeat(10 * 1024 * 1024 / 4);
        }
        let parts = match self.below(10) {
            0 => 0,
            1..=6 => 1 + self.below(6),
            7 | 8 => 1 + self.below(60),
            _ => 1 + self.below(2_000),
        };
        let mut s = String::new();
        for _ in 0..parts {
            match self.below(4) {
                0 => s.push(char::from_u32(self.below(0x11_0000) as u32).unwrap_or('\u{fffd}')),
                1 => s.push((b' ' + self.below(95) as u8) as char),
                _ => s.push_str(PIECES[self.below(PIECES.len())]),
            }
        }
        s
    }

    /// Bytes that are often not UTF-8.
    pub(crate) fn bytes(&mut self, i: usize) -> Vec<u8> {
        if self.chance(2) {
            let mut b = self.string(i).into_bytes();
            for _ in 0..self.below(4) {
                let at = self.below(b.len() + 1);
                b.insert(at, [0xff, 0xc0, 0x80, 0xed][self.below(4)]);
            }
            b
        } else {
            (0..self.below(300)).map(|_| self.next() as u8).collect()
        }
    }

    /// A number as JSON: huge, negative, fractional, or not a number at all.
    pub(crate) fn number(&mut self) -> Value {
        match self.below(12) {
            0 => json!(u64::MAX),
            1 => json!(i64::MIN),
            2 => json!(-1),
            3 => json!(0),
            4 => json!(1e308),
            5 => json!(-0.5),
            6 => json!(3.9),
            7 => json!("12"),
            8 => Value::Null,
            9 => json!(f64::MIN_POSITIVE),
            10 => json!(self.next() as i64),
            _ => json!(self.below(100)),
        }
    }

    /// Any JSON value, nested at most `depth`.
    pub(crate) fn value(&mut self, i: usize, depth: usize) -> Value {
        match self.below(if depth == 0 { 5 } else { 7 }) {
            0 => self.number(),
            1 | 2 => Value::String(self.string(i)),
            3 => json!(self.chance(2)),
            4 => Value::Null,
            5 => Value::Array(
                (0..self.below(4))
                    .map(|_| self.value(i, depth - 1))
                    .collect(),
            ),
            _ => {
                let mut m = serde_json::Map::new();
                for _ in 0..self.below(4) {
                    let k = self.string(1);
                    m.insert(k, self.value(i, depth - 1));
                }
                Value::Object(m)
            }
        }
    }

    /// `base` with a few of its values replaced by hostile ones, fields dropped or added.
    pub(crate) fn mutate_json(&mut self, i: usize, base: &Value) -> Value {
        let mut v = base.clone();
        for _ in 0..1 + self.below(3) {
            self.mutate_in(i, &mut v);
        }
        v
    }

    fn mutate_in(&mut self, i: usize, v: &mut Value) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                let keys: Vec<String> = m.keys().cloned().collect();
                let k = keys[self.below(keys.len())].clone();
                match self.below(6) {
                    0 => {
                        m.remove(&k);
                    }
                    1 => {
                        let extra = self.string(1);
                        let val = self.value(i, 1);
                        m.insert(extra, val);
                    }
                    2 | 3 => {
                        let val = self.value(i, 1);
                        m.insert(k, val);
                    }
                    _ => self.mutate_in(i, m.get_mut(&k).expect("a key just listed")),
                }
            }
            Value::Array(a) if !a.is_empty() => {
                let at = self.below(a.len());
                if self.chance(4) {
                    a.remove(at);
                } else {
                    self.mutate_in(i, &mut a[at]);
                }
            }
            other => *other = self.value(i, 1),
        }
    }

    /// `base` with bits flipped, bytes cut, inserted, or a piece repeated.
    pub(crate) fn mutate_bytes(&mut self, base: &[u8]) -> Vec<u8> {
        let mut b = base.to_vec();
        for _ in 0..1 + self.below(4) {
            let len = b.len();
            match self.below(6) {
                0 if len > 0 => {
                    let at = self.below(len);
                    b[at] ^= 1 << self.below(8);
                }
                1 if len > 0 => {
                    let at = self.below(len);
                    b[at] = [0, 0xff, 0x7f, 0x80][self.below(4)];
                }
                2 => b.truncate(self.below(len + 1)),
                3 => {
                    let at = self.below(len + 1);
                    let extra: Vec<u8> =
                        (0..1 + self.below(16)).map(|_| self.next() as u8).collect();
                    b.splice(at..at, extra);
                }
                4 if len > 0 => {
                    let from = self.below(len);
                    let to = (from + 1 + self.below(64)).min(len);
                    let piece = b[from..to].to_vec();
                    let at = self.below(len + 1);
                    b.splice(at..at, piece);
                }
                _ => {
                    // A little-endian u32 field somewhere set to a boundary value.
                    if len >= 4 {
                        let at = self.below(len - 3);
                        let v: u32 = [0, 1, u32::MAX, i32::MAX as u32, 0x8000_0000][self.below(5)];
                        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
                    }
                }
            }
        }
        b
    }
}
