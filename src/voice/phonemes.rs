//! Text → Kokoro's phoneme symbols, through espeak-ng.
//!
//! A small hand-written FFI to `libespeak-ng` (`espeak_TextToPhonemes`): the `espeakng-sys`
//! crate's build clashes with whisper-rs's bindgen in one build. espeak returns one clause per
//! call and drops its punctuation; we read the punctuation back from the text it consumed, so
//! Kokoro sees the commas and full stops that shape its prosody, and the player knows where the
//! pauses go. espeak's IPA is then mapped onto the symbol set Kokoro was trained on (misaki's:
//! diphthongs as single letters, `ʤ`/`ʧ`, American flaps as `T`).
//!
//! espeak-ng keeps global state and is not thread-safe: every call holds one process-wide lock.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::Mutex;

use crate::error::{Error, Result};

#[link(name = "espeak-ng")]
extern "C" {
    fn espeak_Initialize(
        output: c_int,
        buflength: c_int,
        path: *const c_char,
        options: c_int,
    ) -> c_int;
    fn espeak_SetVoiceByName(name: *const c_char) -> c_int;
    fn espeak_SetSynthCallback(cb: extern "C" fn(*mut i16, c_int, *mut c_void) -> c_int);
    fn espeak_SetParameter(parameter: c_int, value: c_int, relative: c_int) -> c_int;
    fn espeak_Synth(
        text: *const c_void,
        size: usize,
        position: u32,
        position_type: c_int,
        end_position: u32,
        flags: u32,
        unique_identifier: *mut u32,
        user_data: *mut c_void,
    ) -> c_int;
    fn espeak_Synchronize() -> c_int;
    fn espeak_TextToPhonemes(
        textptr: *mut *const c_void,
        textmode: c_int,
        phonememode: c_int,
    ) -> *const c_char;
}

/// Synthesis calls the callback on the calling thread and returns when done.
const AUDIO_OUTPUT_SYNCHRONOUS: c_int = 2;
const INITIALIZE_DONT_EXIT: c_int = 0x8000;
const CHARS_UTF8: c_int = 1;
/// IPA output, with `^` tying the letters of one phoneme (`a^ɪ`), so diphthongs can be mapped.
const PHONEMES_IPA_TIED: c_int = 0x02 | 0x80 | ((b'^' as c_int) << 8);

/// Which English espeak speaks: Kokoro's American voices (`a…`) and British ones (`b…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    American,
    British,
}

impl Dialect {
    fn espeak_voice(self) -> &'static str {
        match self {
            Dialect::American => "en-us",
            Dialect::British => "en",
        }
    }
}

/// One clause of phonemes and the punctuation that ended it in the text (if any).
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    /// Kokoro symbols, words separated by spaces.
    pub phonemes: String,
    /// `.`, `!`, `?`, `,`, `;`, `:`, `—`, `…` or none.
    pub punct: Option<char>,
    /// Whether the text had a paragraph break (a blank line or a newline) after this clause.
    pub paragraph: bool,
}

struct Espeak {
    ready: bool,
    /// The voice espeak is set to (`None`: unknown, set it before use).
    voice: Option<Dialect>,
    /// The rate espeak synthesises at (returned by `espeak_Initialize`).
    rate: u32,
}

static ESPEAK: Mutex<Espeak> = Mutex::new(Espeak {
    ready: false,
    voice: None,
    rate: 0,
});

const PUNCT: &[char] = &['.', '!', '?', ',', ';', ':', '—', '…'];

/// espeak-ng, started once, under its process-wide lock.
fn ready() -> Result<std::sync::MutexGuard<'static, Espeak>> {
    let mut guard = ESPEAK.lock().unwrap_or_else(|p| p.into_inner());
    if !guard.ready {
        // SAFETY: called once, under the lock; a null path means espeak-ng's installed data.
        let rate = unsafe {
            espeak_Initialize(
                AUDIO_OUTPUT_SYNCHRONOUS,
                0,
                std::ptr::null(),
                INITIALIZE_DONT_EXIT,
            )
        };
        if rate <= 0 {
            return Err(Error::ModelLoad {
                name: "espeak-ng".into(),
                detail:
                    "espeak-ng could not start (is the Debian package espeak-ng-data installed?)"
                        .into(),
            });
        }
        guard.ready = true;
        guard.rate = rate as u32;
    }
    Ok(guard)
}

/// Samples espeak hands to [`collect`] during one `espeak_Synth` call (made under [`ESPEAK`]).
static SYNTH: Mutex<Vec<i16>> = Mutex::new(Vec::new());

extern "C" fn collect(wav: *mut i16, n: c_int, _events: *mut c_void) -> c_int {
    if !wav.is_null() && n > 0 {
        // SAFETY: espeak passes `n` valid samples at `wav` for the duration of the call.
        let block = unsafe { std::slice::from_raw_parts(wav, n as usize) };
        SYNTH
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(block);
    }
    0
}

/// Speak `text` with espeak-ng's own formant synthesiser: the voice `voice` (an espeak voice
/// name such as `en-us`, `en+f3`) at `wpm` words a minute. Returns mono samples and their rate.
/// (The dictation harness's robotic voices; the app's voice is Kokoro.)
pub fn formant_speech(text: &str, voice: &str, wpm: u32) -> Result<(Vec<f32>, u32)> {
    const ESPEAK_RATE: c_int = 1;
    const POS_CHARACTER: c_int = 1;
    let mut guard = ready()?;
    let name = CString::new(voice)
        .map_err(|_| Error::InvalidInput("an espeak voice name has no NUL".into()))?;
    guard.voice = None; // whatever happens, the phonemiser sets its own voice again
                        // SAFETY: valid C strings and a callback that only copies; all under the lock.
    unsafe {
        if espeak_SetVoiceByName(name.as_ptr()) != 0 {
            return Err(Error::InvalidInput(format!(
                "espeak-ng has no '{voice}' voice"
            )));
        }
        espeak_SetSynthCallback(collect);
        espeak_SetParameter(ESPEAK_RATE, wpm as c_int, 0);
    }
    // The same guard as the phonemiser's: espeak-ng 1.51 crashes on some characters.
    let c_text = CString::new(speakable(text)).expect("NULs removed");
    SYNTH.lock().unwrap_or_else(|p| p.into_inner()).clear();
    // SAFETY: the text outlives the call, which (synchronous mode) returns when synthesis is done.
    let err = unsafe {
        let e = espeak_Synth(
            c_text.as_ptr() as *const c_void,
            c_text.as_bytes_with_nul().len(),
            0,
            POS_CHARACTER,
            0,
            CHARS_UTF8 as u32,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        espeak_Synchronize();
        espeak_SetParameter(ESPEAK_RATE, 175, 0);
        e
    };
    if err != 0 {
        return Err(Error::Audio(format!(
            "espeak-ng could not speak (error {err})"
        )));
    }
    let samples = std::mem::take(&mut *SYNTH.lock().unwrap_or_else(|p| p.into_inner()));
    Ok((
        samples.iter().map(|&x| x as f32 / 32768.0).collect(),
        guard.rate,
    ))
}

/// What espeak-ng is given of `text`: the characters an English voice can read (Latin letters
/// with their accents, digits, punctuation, symbols, spaces and line breaks); anything else
/// becomes a space. Those others have nothing an English voice can say (espeak-ng would spell
/// emoji and other scripts out in other languages, or say nothing), and espeak-ng 1.51 reads freed
/// memory after some of them, control characters and combining marks among them: a segfault,
/// not an error (found by `tests/it/fuzz.rs`). NUL would also cut the text short.
fn speakable(text: &str) -> String {
    text.chars()
        .map(|c| if readable(c) { c } else { ' ' })
        .collect()
}

fn readable(c: char) -> bool {
    matches!(c,
        ' ' | '\n' | '\t' | '\r'
        | '!'..='~'                      // ASCII letters, digits, punctuation
        | '\u{a1}'..='\u{24f}'           // Latin-1 Supplement, Latin Extended-A and -B
        | '\u{1e00}'..='\u{1eff}'        // Latin Extended Additional
        | '\u{2010}'..='\u{2027}'        // dashes, quotes, bullets, ellipsis
        | '\u{2030}'..='\u{205e}'        // per mille, primes, more punctuation
        | '\u{20a0}'..='\u{20c0}'        // currency signs
    ) && c != '\u{ad}' // the soft hyphen is invisible
}

/// Phonemise `text` clause by clause. Text espeak cannot phonemise (emoji, other scripts) gives
/// clauses with no phonemes, which the caller skips.
pub fn phonemize(text: &str, dialect: Dialect) -> Result<Vec<Clause>> {
    let mut guard = ready()?;
    if guard.voice != Some(dialect) {
        let name = CString::new(dialect.espeak_voice()).expect("no NUL in a voice name");
        // SAFETY: a valid C string; espeak copies what it needs.
        if unsafe { espeak_SetVoiceByName(name.as_ptr()) } != 0 {
            return Err(Error::ModelLoad {
                name: "espeak-ng".into(),
                detail: format!("espeak-ng has no '{}' voice", dialect.espeak_voice()),
            });
        }
        guard.voice = Some(dialect);
    }
    let c_text = CString::new(speakable(text)).expect("NULs removed");
    let base = c_text.as_ptr() as usize;
    let bytes = c_text.as_bytes();
    let mut ptr: *const c_void = c_text.as_ptr() as *const c_void;
    let mut clauses = Vec::new();
    while !ptr.is_null() {
        let start = ptr as usize - base;
        // SAFETY: `ptr` points into `c_text`, which outlives the loop; espeak advances it or nulls it.
        let out = unsafe { espeak_TextToPhonemes(&mut ptr, CHARS_UTF8, PHONEMES_IPA_TIED) };
        let end = if ptr.is_null() {
            bytes.len()
        } else {
            (ptr as usize - base).min(bytes.len())
        };
        if end <= start && !ptr.is_null() {
            break; // espeak made no progress: never loop forever on odd input
        }
        let ipa = if out.is_null() {
            String::new()
        } else {
            unsafe { CStr::from_ptr(out) }
                .to_string_lossy()
                .into_owned()
        };
        let consumed = String::from_utf8_lossy(&bytes[start..end]);
        // espeak reads one character into the next clause ("Hello there, m"): drop that part.
        let own = if ptr.is_null() {
            &consumed[..]
        } else {
            consumed.trim_end_matches(|c: char| !c.is_whitespace())
        };
        let punct = own.trim_end().chars().last().filter(|c| PUNCT.contains(c));
        let paragraph = consumed.contains('\n');
        clauses.push(Clause {
            phonemes: to_kokoro(&ipa, dialect),
            punct,
            paragraph,
        });
    }
    Ok(clauses)
}

/// espeak IPA (with `^` ties) → the symbols Kokoro v1.0 was trained on. Longest match first.
pub fn to_kokoro(ipa: &str, dialect: Dialect) -> String {
    const SHARED: &[(&str, &str)] = &[
        ("ʔˌn\u{329}", "tᵊn"),
        ("ʔn\u{329}", "tᵊn"),
        ("ʔn", "tᵊn"),
        ("a^ɪ", "I"),
        ("a^ʊ", "W"),
        ("d^ʒ", "ʤ"),
        ("e^ɪ", "A"),
        ("t^ʃ", "ʧ"),
        ("ɔ^ɪ", "Y"),
        ("ə^l", "ᵊl"),
        ("ʲo", "jo"),
        ("ʲə", "jə"),
        ("ʲu", "ju"),
        ("\u{303}", ""),
        ("ʔ", "t"),
        ("e", "A"),
        ("r", "ɹ"),
        ("x", "k"),
        ("ç", "k"),
        ("ɐ", "ə"),
        ("ɬ", "l"),
        ("ʲ", ""),
        ("ɚ", "əɹ"),
    ];
    const AMERICAN: &[(&str, &str)] = &[("o^ʊ", "O"), ("ɜː", "ɜɹ"), ("ɾ", "T"), ("ː", "")];
    const BRITISH: &[(&str, &str)] = &[("ə^ʊ", "Q"), ("e^ə", "ɛː"), ("ɪ^ə", "ɪə")];
    let local = if dialect == Dialect::American {
        AMERICAN
    } else {
        BRITISH
    };
    let mut out = String::with_capacity(ipa.len());
    let mut rest = ipa.trim();
    'outer: while let Some(c) = rest.chars().next() {
        for (from, to) in local.iter().chain(SHARED.iter()) {
            if rest.starts_with(from) {
                out.push_str(to);
                rest = &rest[from.len()..];
                continue 'outer;
            }
        }
        match c {
            '^' => {}
            '\n' | '\t' => out.push(' '),
            _ => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn espeak_is_given_only_what_an_english_voice_reads() {
        // The fuzz case that made espeak-ng 1.51 read freed memory: a Bengali sign, DEL, and
        // combining accents.
        assert_eq!(speakable("\u{9fb}\u{7f}a\u{301}a\u{301}"), "  a a ");
        assert_eq!(speakable("a\0b\u{202e}c🦀"), "a b c ");
        let kept = "Crème brûlée — 12 € at 9:30, “quoted”… naïve Œuvre\nnext";
        assert_eq!(speakable(kept), kept);
    }
    #[test]
    fn the_harness_voice_gets_only_what_espeak_can_read() {
        // Combining marks and control characters once crashed espeak-ng (tests/it/fuzz.rs); the
        // formant voice the bench speaks with is given the same guarded text as the phonemiser.
        let (samples, rate) =
            formant_speech("a\u{301}\u{7f}\u{9fb} hello\0 world", "en-us", 175).unwrap();
        assert!(
            rate > 0 && samples.len() > rate as usize / 4,
            "{} samples",
            samples.len()
        );
    }

    #[test]
    fn diphthongs_and_affricates_become_kokoro_letters() {
        assert_eq!(to_kokoro("n^ˈa^ɪs d^ˈe^ɪ", Dialect::American), "nˈIs dˈA");
        assert_eq!(
            to_kokoro("d^ʒˈʌmps t^ʃˈɜːt^ʃ", Dialect::American),
            "ʤˈʌmps ʧˈɜɹʧ"
        );
        assert_eq!(to_kokoro("wˈɔːɾɚ", Dialect::American), "wˈɔTəɹ");
        assert_eq!(to_kokoro("h^ə^ʊm", Dialect::British), "hQm");
    }

    #[test]
    fn clauses_keep_their_punctuation() {
        let c = phonemize("Hello there, my friend. Is it raining?", Dialect::American).unwrap();
        let puncts: Vec<_> = c.iter().map(|c| c.punct).collect();
        assert_eq!(puncts, vec![Some(','), Some('.'), Some('?')], "{c:?}");
        assert!(c[0].phonemes.contains("hə"), "{c:?}");
    }

    #[test]
    fn a_script_espeak_does_not_know_is_no_error() {
        // Runes: espeak may spell out their names or give nothing; either way no error, no hang.
        assert!(phonemize("ᚠᛇᚻ ᛒᛦᚦ", Dialect::American).is_ok());
        assert!(phonemize("", Dialect::British)
            .unwrap()
            .iter()
            .all(|c| c.phonemes.is_empty()));
    }
}
