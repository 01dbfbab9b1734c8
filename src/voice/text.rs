//! Text → the phrases the voice speaks, in the order and sizes that let playback start early.
//!
//! Text is cleaned (emoji and control characters dropped), cut into sentences (cheap, in Rust),
//! and each sentence is phonemised only when the synthesiser is about to need it, so a 20 000
//! character note starts speaking as fast as a short one. Phrases are built from words; a phrase
//! ends at a clause's punctuation when one falls inside its budget, else between two words (a
//! "continuation": the player then joins the two without a pause).

use std::collections::VecDeque;

use super::phonemes::{phonemize, Dialect};
use crate::error::Result;

/// A rest of a sentence this short (symbols, and at most a third of the budget) joins the
/// phrase before it.
const SHORT_REST: usize = 16;

/// Pause after a sentence (`.`, `!`, `?`, `…`).
pub const SENTENCE_PAUSE_MS: u32 = 320;
/// Pause after a clause (`,`, `;`, `:`, `—`).
pub const CLAUSE_PAUSE_MS: u32 = 160;
/// Pause at a paragraph break.
pub const PARAGRAPH_PAUSE_MS: u32 = 600;

/// Drop what should not be read aloud: emoji, pictographs, variation selectors, control characters.
pub fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c == '\r' || c == '\t' { ' ' } else { c })
        .filter(|&c| {
            let u = c as u32;
            let emoji = (0x1F000..=0x1FAFF).contains(&u)
                || (0x2600..=0x27BF).contains(&u)
                || (0xFE00..=0xFE0F).contains(&u)
                || u == 0x200D
                || (0xE0000..=0xE007F).contains(&u);
            !emoji && (c == '\n' || !c.is_control())
        })
        .collect()
}

/// Cut text into sentences (keeping their punctuation) and paragraph breaks.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        cur.push(c);
        let end = match c {
            '\n' => true,
            '.' | '!' | '?' | '…' => chars.peek().is_none_or(|n| n.is_whitespace()),
            _ => false,
        };
        if end {
            if !cur.trim().is_empty() {
                out.push(std::mem::take(&mut cur));
            } else {
                cur.clear();
            }
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

/// One word of phonemes and what follows it.
#[derive(Debug, Clone, PartialEq)]
struct Word {
    phonemes: String,
    /// Punctuation after this word (end of a clause), if any.
    punct: Option<char>,
    paragraph: bool,
}

/// A phrase ready for the synthesiser.
#[derive(Debug, Clone, PartialEq)]
pub struct Phrase {
    /// Kokoro symbols, punctuation included.
    pub phonemes: String,
    /// Silence the player puts after it (0 for a continuation).
    pub pause_ms: u32,
    /// Cut between two words of one clause: join without a pause.
    pub continues: bool,
}

/// Hands out phrases of the size the caller asks for, phonemising sentence by sentence.
pub struct Phraser {
    dialect: Dialect,
    sentences: VecDeque<String>,
    words: VecDeque<Word>,
}

impl Phraser {
    pub fn new(text: &str, dialect: Dialect) -> Phraser {
        Phraser {
            dialect,
            sentences: sentences(&clean(text)).into(),
            words: VecDeque::new(),
        }
    }

    /// Whether anything is left to speak.
    pub fn is_done(&self) -> bool {
        self.words.is_empty() && self.sentences.is_empty()
    }

    fn fill(&mut self, chars: usize) -> Result<()> {
        while self
            .words
            .iter()
            .map(|w| w.phonemes.chars().count() + 1)
            .sum::<usize>()
            < chars
        {
            let Some(s) = self.sentences.pop_front() else {
                break;
            };
            for clause in phonemize(&s, self.dialect)? {
                let mut ws: Vec<Word> = clause
                    .phonemes
                    .split(' ')
                    .filter(|w| w.chars().any(|c| c.is_alphabetic()))
                    .map(|w| Word {
                        phonemes: w.to_string(),
                        punct: None,
                        paragraph: false,
                    })
                    .collect();
                if let Some(last) = ws.last_mut() {
                    last.punct = clause.punct.or(Some(','));
                    last.paragraph = clause.paragraph;
                }
                self.words.extend(ws);
            }
            if s.ends_with('\n') {
                if let Some(last) = self.words.back_mut() {
                    last.paragraph = true;
                }
            }
        }
        Ok(())
    }

    /// The next phrase of at most about `budget` symbols (at least one word; none when done).
    /// It ends at the last clause end inside the budget if that is past a third of it.
    pub fn next(&mut self, budget: usize) -> Result<Option<Phrase>> {
        self.fill(budget * 2 + 64)?;
        if self.words.is_empty() {
            return Ok(None);
        }
        let budget = budget.clamp(8, super::kokoro::MAX_IDS - 10);
        let (mut len, mut take, mut clause_end) = (0usize, 0usize, None);
        for (i, w) in self.words.iter().enumerate() {
            let wl = w.phonemes.chars().count() + 2;
            if i > 0 && len + wl > budget {
                break;
            }
            len += wl;
            take = i + 1;
            if w.punct.is_some() {
                clause_end = Some(i + 1);
                if matches!(w.punct, Some('.' | '!' | '?' | '…')) || w.paragraph {
                    break; // a sentence is never joined to the next inside one phrase
                }
            }
        }
        if let Some(end) = clause_end {
            if end * 3 >= take {
                take = end;
            }
        }
        // A short rest of the sentence rides along: a phrase of one or two words costs nearly
        // as much to synthesise as a long one (its padding), and sounds cut off on its own.
        let ends_sentence =
            |w: &Word| w.paragraph || matches!(w.punct, Some('.' | '!' | '?' | '…'));
        if take > 1 && !ends_sentence(&self.words[take - 1]) {
            let mut rest = 0usize;
            for (i, w) in self.words.iter().enumerate().skip(take) {
                rest += w.phonemes.chars().count() + 2;
                if rest > SHORT_REST.min(budget / 3) {
                    break;
                }
                if ends_sentence(w) {
                    take = i + 1;
                    break;
                }
            }
        }
        let words: Vec<Word> = self.words.drain(..take).collect();
        let mut phonemes = String::new();
        for w in &words {
            if !phonemes.is_empty() {
                phonemes.push(' ');
            }
            // A single "word" longer than the model takes (a hostile string): cut it.
            phonemes.extend(w.phonemes.chars().take(super::kokoro::MAX_IDS - 10));
            if let Some(p) = w.punct {
                phonemes.push(p);
            }
        }
        let last = words.last().expect("at least one word");
        let pause_ms = match (last.paragraph, last.punct) {
            (true, _) => PARAGRAPH_PAUSE_MS,
            (_, Some('.' | '!' | '?' | '…')) => SENTENCE_PAUSE_MS,
            (_, Some(_)) => CLAUSE_PAUSE_MS,
            (_, None) => 0,
        };
        Ok(Some(Phrase {
            phonemes,
            pause_ms,
            continues: last.punct.is_none(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emoji_and_controls_are_dropped() {
        assert_eq!(clean("hi 😀 there\u{7}\u{FE0F}!"), "hi  there!");
    }

    #[test]
    fn sentences_split_at_stops_but_not_inside_numbers() {
        assert_eq!(
            sentences("It costs 3.50 now. Really? Yes\nok"),
            vec!["It costs 3.50 now.", " Really?", " Yes\n", "ok"]
        );
    }

    #[test]
    fn first_phrase_is_short_and_the_rest_follows_in_order() {
        let mut p = Phraser::new("You said the dentist moved your appointment to Thursday at nine, after lunch. Bring the card.", Dialect::American);
        let first = p.next(20).unwrap().unwrap();
        assert!(first.phonemes.chars().count() <= 30, "{first:?}");
        assert!(first.continues && first.pause_ms == 0, "{first:?}");
        let mut rest = Vec::new();
        while let Some(ph) = p.next(200).unwrap() {
            rest.push(ph);
        }
        assert!(rest.len() >= 2, "{rest:?}");
        assert!(rest.iter().any(|r| r.pause_ms == SENTENCE_PAUSE_MS));
        assert!(p.is_done());
    }
}
