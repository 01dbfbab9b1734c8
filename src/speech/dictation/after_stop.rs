//! What a stopped dictation becomes, by Settings → After dictation: a draft (as always), a draft
//! also typed into the app that has the focus, or a memory also typed there.
//!
//! Nothing said is lost: the text is kept in Umwelt (the draft is on disk before this runs; a
//! memory is committed first) **before** anything is typed. When it cannot be typed (no window
//! has the focus, the compositor refuses, a key is still held down), the text goes to the
//! clipboard and the outcome says so, for the window and for a notification.

use super::*;
use crate::settings::AfterDictation;
use crate::typing::Method;

/// The world outside Umwelt's window a dictation may be typed into: the app side gives the
/// real one (XTest, the clipboard it keeps alive), a test its own.
pub trait Elsewhere {
    /// Whether Umwelt's own window has the keyboard focus: its text would be typed into Umwelt.
    fn umwelt_has_focus(&self) -> bool;
    /// Type `text` into the focused app ([`crate::typing::type_text`]).
    fn type_text(&self, text: &str) -> Result<Method>;
    /// Put `text` on the clipboard, for the user to paste.
    fn copy(&self, text: &str) -> Result<()>;
}

/// What became of a stopped dictation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct AfterStop {
    /// The draft, when it stays one (after Keep it as a draft and Type it, or a failed save).
    pub draft: Option<Draft>,
    /// The memory it was saved as (Type it, and save it).
    pub memory: Option<Memory>,
    /// Whether it was typed into the focused app.
    pub typed: bool,
    /// What the user should know: why it was not typed (or saved), and where the text is.
    pub message: Option<String>,
    /// Whether to tell the user outside the window too (a notification): something they asked
    /// for did not happen while they were in another app.
    pub tell: bool,
}

impl AfterStop {
    /// A draft and nothing more.
    pub fn kept(draft: Draft) -> AfterStop {
        AfterStop {
            draft: Some(draft),
            memory: None,
            typed: false,
            message: None,
            tell: false,
        }
    }
}

impl DictationDrafts {
    /// Carry out `after` for `draft` (just made by [`DictationDrafts::stop`] or `finish`): save
    /// it in `scope` first when asked, then type it into the focused app, else put it on the
    /// clipboard. A draft without text (nothing heard, transcription failed) stays a draft.
    pub fn after_stop(
        &self,
        draft: Draft,
        after: AfterDictation,
        store: &Store,
        scope: &str,
        elsewhere: &dyn Elsewhere,
    ) -> AfterStop {
        let text = draft.text.trim().to_string();
        if !after.types() || draft.problem.is_some() || text.is_empty() {
            return AfterStop::kept(draft);
        }
        let id = draft.id.clone();
        let mut out = AfterStop::kept(draft);
        let mut notes = Vec::new();
        if after == AfterDictation::TypeAndSave {
            match self.save(&id, &text, store, scope, "") {
                Ok(m) => {
                    out.draft = None;
                    out.memory = Some(m);
                }
                Err(e) => {
                    notes.push(format!(
                        "The dictation could not be saved as a memory ({e}); it is kept as a draft."
                    ));
                    out.tell = true;
                }
            }
        }
        let kept_as = match &out.memory {
            Some(m) => format!("kept as memory {}", m.id),
            None => "kept as a draft".to_string(),
        };
        if elsewhere.umwelt_has_focus() {
            notes.push(format!(
                "Umwelt's own window had the focus, so nothing was typed; the dictation is {kept_as}."
            ));
        } else {
            match elsewhere.type_text(&text) {
                Ok(_) => out.typed = true,
                Err(e) => {
                    let why = match e {
                        Error::NotTyped(why) => why,
                        e => e.to_string(),
                    };
                    notes.push(match elsewhere.copy(&text) {
                        Ok(()) => format!(
                            "Not typed ({why}). Nothing is lost: it is on the clipboard to paste, \
                             and {kept_as}."
                        ),
                        Err(c) => format!(
                            "Not typed ({why}), nor put on the clipboard ({c}). Nothing is lost: \
                             it is {kept_as}."
                        ),
                    });
                    out.tell = true;
                }
            }
        }
        out.message = (!notes.is_empty()).then(|| notes.join(" "));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::DEFAULT_SCOPE;
    use std::cell::RefCell;

    /// Records what would have been typed or copied; typing fails when told to.
    #[derive(Default)]
    struct Desk {
        focused: bool,
        refuse: Option<&'static str>,
        typed: RefCell<Vec<String>>,
        copied: RefCell<Vec<String>>,
        /// What the draft folder held when typing began: nothing may be typed before it is kept.
        kept_when_typed: RefCell<Option<(usize, usize)>>,
        watch: Option<(std::path::PathBuf, std::path::PathBuf)>,
    }

    impl Elsewhere for Desk {
        fn umwelt_has_focus(&self) -> bool {
            self.focused
        }
        fn type_text(&self, text: &str) -> Result<Method> {
            if let Some((drafts, db)) = &self.watch {
                let store = Store::open(db).unwrap();
                *self.kept_when_typed.borrow_mut() = Some((
                    std::fs::read_dir(drafts)
                        .unwrap()
                        .filter(|e| {
                            e.as_ref()
                                .unwrap()
                                .file_name()
                                .to_string_lossy()
                                .ends_with(".draft.json")
                        })
                        .count(),
                    store.count(DEFAULT_SCOPE).unwrap(),
                ));
            }
            match self.refuse {
                Some(why) => Err(Error::NotTyped(why.into())),
                None => {
                    self.typed.borrow_mut().push(text.into());
                    Ok(Method::XTest)
                }
            }
        }
        fn copy(&self, text: &str) -> Result<()> {
            self.copied.borrow_mut().push(text.into());
            Ok(())
        }
    }

    /// A store and a dictation folder holding one draft with `text`.
    fn with_draft(dir: &std::path::Path, text: &str) -> (Store, DictationDrafts, Draft) {
        let db = dir.join("m.sqlite");
        let store = Store::open(&db).unwrap();
        let recordings = dir.join("recordings");
        std::fs::create_dir_all(&recordings).unwrap();
        let drafts = DictationDrafts::new(&recordings);
        let wav = recordings.join("1700000000000.wav");
        crate::audio::write_wav_16k_mono(&wav, &[0.0; 1600]).unwrap();
        let spool = recordings.join("1700000000000.spool");
        let draft = drafts
            .write_draft(&spool, &wav, 0.1, Ok(text.into()))
            .unwrap();
        (store, drafts, draft)
    }

    /// `after_stop` in the user's own notebook.
    fn stop(
        drafts: &DictationDrafts,
        draft: Draft,
        after: AfterDictation,
        store: &Store,
        desk: &Desk,
    ) -> AfterStop {
        drafts.after_stop(draft, after, store, DEFAULT_SCOPE, desk)
    }

    fn watching(dir: &std::path::Path) -> Desk {
        Desk {
            watch: Some((dir.join("recordings"), dir.join("m.sqlite"))),
            ..Desk::default()
        }
    }

    #[test]
    fn type_keeps_the_draft_and_types_it() {
        let dir = tempfile::tempdir().unwrap();
        let (store, drafts, draft) = with_draft(dir.path(), " buy milk ");
        let desk = watching(dir.path());
        let out = stop(&drafts, draft, AfterDictation::Type, &store, &desk);
        assert!(out.typed && !out.tell && out.message.is_none());
        assert_eq!(*desk.typed.borrow(), ["buy milk"]);
        assert_eq!(
            *desk.kept_when_typed.borrow(),
            Some((1, 0)),
            "the draft was on disk"
        );
        assert_eq!(drafts.drafts().len(), 1);
        assert!(out.draft.is_some() && out.memory.is_none());
    }

    #[test]
    fn type_and_save_commits_the_memory_before_typing() {
        let dir = tempfile::tempdir().unwrap();
        let (store, drafts, draft) = with_draft(dir.path(), "call Anna");
        let desk = watching(dir.path());
        let out = stop(&drafts, draft, AfterDictation::TypeAndSave, &store, &desk);
        assert_eq!(
            *desk.kept_when_typed.borrow(),
            Some((0, 1)),
            "saved, then typed"
        );
        let m = out.memory.expect("saved");
        assert_eq!(m.text, "call Anna");
        assert!(out.draft.is_none() && out.typed);
        assert!(drafts.drafts().is_empty());
    }

    #[test]
    fn a_refusal_puts_the_text_on_the_clipboard_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let (store, drafts, draft) = with_draft(dir.path(), "call Anna");
        let desk = Desk {
            refuse: Some("no window has the keyboard focus"),
            ..Desk::default()
        };
        let out = stop(&drafts, draft, AfterDictation::TypeAndSave, &store, &desk);
        assert!(!out.typed && out.tell);
        assert_eq!(*desk.copied.borrow(), ["call Anna"]);
        let message = out.message.unwrap();
        assert!(
            message.contains("no window has the keyboard focus"),
            "{message}"
        );
        assert!(message.contains("clipboard"), "{message}");
        let id = out.memory.unwrap().id;
        assert!(message.contains(&format!("memory {id}")), "{message}");
    }

    #[test]
    fn nothing_is_typed_into_umwelt_itself_nor_a_draft_without_text() {
        let dir = tempfile::tempdir().unwrap();
        let (store, drafts, draft) = with_draft(dir.path(), "note");
        let desk = Desk {
            focused: true,
            ..Desk::default()
        };
        let out = stop(&drafts, draft.clone(), AfterDictation::Type, &store, &desk);
        assert!(!out.typed && !out.tell && out.draft.is_some());
        assert!(out.message.unwrap().contains("own window"));
        let desk = Desk::default();
        let silent = Draft {
            text: String::new(),
            problem: Some("no speech was heard".into()),
            ..draft.clone()
        };
        let out = stop(&drafts, silent, AfterDictation::TypeAndSave, &store, &desk);
        assert_eq!(
            out,
            AfterStop::kept(Draft {
                text: String::new(),
                problem: Some("no speech was heard".into()),
                ..draft.clone()
            })
        );
        let out = stop(
            &drafts,
            draft.clone(),
            AfterDictation::KeepDraft,
            &store,
            &desk,
        );
        assert_eq!(out, AfterStop::kept(draft));
        assert!(desk.typed.borrow().is_empty() && desk.copied.borrow().is_empty());
        assert_eq!(store.count(DEFAULT_SCOPE).unwrap(), 0);
    }
}
