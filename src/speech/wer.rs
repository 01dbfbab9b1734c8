//! Word error rate: how far a transcript is from what was said, in words.
//!
//! `(substitutions + deletions + insertions) / words said`, after both texts are normalised the
//! same way, as whisper's own English normaliser does: lower case, punctuation dropped, numbers
//! and ordinals up to 99 spelled out (whisper writes "9" for "nine", "14th" for "fourteenth"),
//! titles spelled out ("Dr." is "doctor"), British spellings made American ("tyres" is
//! "tires"), hyphens split and "wi fi" joined.

/// Lower-case words without punctuation, numbers spelled out.
pub fn normalise(text: &str) -> Vec<String> {
    let lower = text.to_lowercase().replace(['-', '—', '/'], " ");
    lower
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .replace(['.', ',', '!', '?', '"', ';', ':'], "")
        })
        .filter(|w| !w.is_empty())
        .flat_map(|w| {
            if let Ok(n) = w.parse::<u32>() {
                if n < 100 {
                    return spell(n).split(' ').map(String::from).collect::<Vec<_>>();
                }
            }
            if let Some(n) = ordinal(&w) {
                return spell_ordinal(n).split(' ').map(String::from).collect();
            }
            vec![standard(&w).to_string()]
        })
        .collect::<Vec<_>>()
        .join(" ")
        .replace("wi fi", "wifi")
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// "14th" → 14 (up to 99).
fn ordinal(w: &str) -> Option<u32> {
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    let n: u32 = digits.parse().ok()?;
    (["st", "nd", "rd", "th"].contains(&suffix) && n < 100).then_some(n)
}

fn spell_ordinal(n: u32) -> String {
    let words = spell(n);
    let (head, last) = match words.rsplit_once(' ') {
        Some((h, l)) => (format!("{h} "), l.to_string()),
        None => (String::new(), words.clone()),
    };
    let last = match last.as_str() {
        "one" => "first".into(),
        "two" => "second".into(),
        "three" => "third".into(),
        "five" => "fifth".into(),
        "eight" => "eighth".into(),
        "nine" => "ninth".into(),
        "twelve" => "twelfth".into(),
        l if l.ends_with('y') => format!("{}ieth", &l[..l.len() - 1]),
        l => format!("{l}th"),
    };
    format!("{head}{last}")
}

/// One spelling per word: titles spelled out, British spellings made American (a short list of
/// the common ones, as in whisper's normaliser).
fn standard(w: &str) -> &str {
    match w {
        "dr" => "doctor",
        "mr" => "mister",
        "mrs" => "missus",
        "ms" => "miss",
        "st" => "saint",
        "tyres" => "tires",
        "tyre" => "tire",
        "neighbours" => "neighbors",
        "neighbour" => "neighbor",
        "neighbour's" => "neighbor's",
        "neighbours'" => "neighbors'",
        "colour" => "color",
        "colours" => "colors",
        "favourite" => "favorite",
        "centre" => "center",
        "theatre" => "theater",
        "organise" => "organize",
        "realise" => "realize",
        "cheque" => "check",
        "programme" => "program",
        "travelling" => "traveling",
        "cancelled" => "canceled",
        "grey" => "gray",
        "disc" => "disk",
        "okay" => "ok",
        _ => w,
    }
}

fn spell(n: u32) -> String {
    const ONES: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 10] = [
        "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    match n {
        0..=19 => ONES[n as usize].into(),
        _ if n % 10 == 0 => TENS[(n / 10) as usize].into(),
        _ => format!("{} {}", TENS[(n / 10) as usize], ONES[(n % 10) as usize]),
    }
}

/// Word-level edit distance between what was said and what was heard.
pub fn errors(reference: &[String], hypothesis: &[String]) -> usize {
    let mut prev: Vec<usize> = (0..=hypothesis.len()).collect();
    for (i, r) in reference.iter().enumerate() {
        let mut cur = vec![i + 1; hypothesis.len() + 1];
        for (j, h) in hypothesis.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(r != h))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[hypothesis.len()]
}

/// Word error rate of one transcript (0 when both are empty).
pub fn word_error_rate(reference: &str, hypothesis: &str) -> f64 {
    let (r, h) = (normalise(reference), normalise(hypothesis));
    if r.is_empty() {
        return if h.is_empty() { 0.0 } else { 1.0 };
    }
    errors(&r, &h) as f64 / r.len() as f64
}

/// Word error rate over many pairs: total errors over total words said.
pub fn corpus_wer<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> f64 {
    let (mut errs, mut words) = (0usize, 0usize);
    for (r, h) in pairs {
        let (r, h) = (normalise(r), normalise(h));
        errs += errors(&r, &h);
        words += r.len();
    }
    if words == 0 {
        0.0
    } else {
        errs as f64 / words as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whisper_spellings_count_as_the_words_said() {
        for (said, heard) in [
            ("Doctor Nguyen on the fourteenth", "Dr. Nguyen on the 14th"),
            ("new tyres for the twenty first", "New tires for the 21st."),
            ("the wifi password", "The Wi-Fi password"),
            (
                "Mister Okonkwo, the neighbours",
                "Mr. Okonkwo, the neighbors",
            ),
        ] {
            assert_eq!(normalise(said), normalise(heard), "{said} / {heard}");
        }
        assert_ne!(normalise("the third"), normalise("the 4th"));
    }

    #[test]
    fn counts_substitutions_deletions_and_insertions() {
        assert_eq!(word_error_rate("buy milk today", "buy milk today"), 0.0);
        assert_eq!(word_error_rate("buy milk today", "by milk"), 2.0 / 3.0);
        assert_eq!(word_error_rate("buy milk", "buy some milk"), 0.5);
        assert_eq!(word_error_rate("At nine, Thursday.", "at 9 thursday"), 0.0);
        assert_eq!(word_error_rate("twenty-one cats", "21 cats"), 0.0);
        assert_eq!(corpus_wer([("a b", "a"), ("c d", "c d")]), 0.25);
    }
}
