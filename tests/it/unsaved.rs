//! Unsaved dictations are drafts of the user's holder: seen through the draft and not on main,
//! saved as the memory in one transaction (a save repeated gives the same memory), discarded
//! with the recording, and put right at the next start when a crash split the folder from the
//! file.

use std::sync::Arc;

use umwelt::speech::spool::SpoolWriter;
use umwelt::speech::{DictationDrafts, Ears};
use umwelt::store::holdings::{DraftState, Listing, View};
use umwelt::store::NewMemory;
use umwelt::{audio, Store};

use crate::common;

#[test]
fn an_unsaved_dictation_is_seen_in_its_draft_only_and_saved_once() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("m.sqlite")).unwrap();
    let d = store
        .put_unsaved("1700000000000", "me", "remember to buy milk", 1)
        .unwrap();
    let me = store.holder("me").unwrap();
    let u = store.unsaved("1700000000000").unwrap().unwrap();
    assert_eq!(
        (u.draft, u.state, u.holder),
        (d, DraftState::Open, Some(me))
    );
    let claim = u.claim.unwrap();
    assert!(store.holds(&View::in_draft(d), me, claim).unwrap());
    // Outside the draft the claim does not exist: main does not know it at all.
    assert!(matches!(
        store.holds(&View::main(), me, claim),
        Err(umwelt::Error::NotFound(_))
    ));
    // Not a memory yet: neither listed nor found by its words.
    assert!(store.list("me", 10, None).unwrap().is_empty());
    assert!(store
        .search_words("milk", "me", None, 10)
        .unwrap()
        .is_empty());

    // A new text (a retry heard more) replaces the old one in the draft; the same text is no write.
    assert_eq!(
        store
            .put_unsaved("1700000000000", "me", "remember to buy oat milk", 1)
            .unwrap(),
        d
    );
    let edited = store
        .unsaved("1700000000000")
        .unwrap()
        .unwrap()
        .claim
        .unwrap();
    let seen = store
        .holdings(&Listing::Holder(me), &View::in_draft(d), 10, None)
        .unwrap()
        .holdings;
    assert_eq!(seen.len(), 1, "the old text is gone from the draft");
    assert_eq!(
        (seen[0].claim, seen[0].text.as_str()),
        (edited, "remember to buy oat milk")
    );

    // Saving writes the memory and merges the draft, in one transaction.
    let mut vector = vec![0.0f32; umwelt::embed::EMBED_DIM];
    vector[7] = 1.0;
    let save = NewMemory {
        scope: "me",
        text: "remember to buy oat milk and bread",
        unsaved: Some("1700000000000"),
        ..Default::default()
    };
    let id = store.remember_with_vector(&save, &vector).unwrap();
    let u = store.unsaved("1700000000000").unwrap().unwrap();
    assert_eq!(
        (u.state, u.saved_as, u.claim),
        (DraftState::Merged, Some(id), None)
    );
    assert!(store.holds(&View::main(), me, id).unwrap());
    assert_eq!(store.list("me", 10, None).unwrap().len(), 1);
    // The draft's own claim is gone with it; a save repeated gives the same memory.
    assert!(store.get(edited).is_err());
    assert_eq!(store.remember_with_vector(&save, &vector).unwrap(), id);
    assert_eq!(store.list("me", 10, None).unwrap().len(), 1);
    // A saved dictation takes no new text and cannot be discarded.
    assert!(store.put_unsaved("1700000000000", "me", "more", 2).is_err());
    assert!(store.drop_unsaved("1700000000000").is_err());

    // Discarding drops the draft and its claim; nothing reaches main.
    store
        .put_unsaved("1700000000001", "me", "a thought", 3)
        .unwrap();
    let thought = store.unsaved("1700000000001").unwrap().unwrap();
    store.drop_unsaved("1700000000001").unwrap();
    assert_eq!(
        store.unsaved("1700000000001").unwrap().unwrap().state,
        DraftState::Discarded
    );
    assert!(store.get(thought.claim.unwrap()).is_err());
    assert_eq!(store.unsaved_names().unwrap(), Vec::<String>::new());
    // Nothing heard: a draft holding nothing.
    store.put_unsaved("1700000000002", "me", "  ", 4).unwrap();
    assert_eq!(store.unsaved("1700000000002").unwrap().unwrap().claim, None);
    assert_eq!(store.unsaved_names().unwrap(), vec!["1700000000002"]);
}

#[test]
fn a_dictation_is_a_draft_of_the_users_holder_from_recording_to_memory() {
    let _process = common::shared();
    let ears = Ears::load().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path().join("m.sqlite")).unwrap());
    let recordings = dir.path().join("recordings");
    let wav = dir.path().join("in.wav");
    common::espeak_wav("remember to buy milk", &wav);
    let pcm = audio::read_wav_16k_mono(&wav).unwrap();
    let spool = || {
        let mut w =
            SpoolWriter::create(&recordings, 16_000, umwelt::sealed::Seal::for_tests()).unwrap();
        w.append(&pcm).unwrap();
        w.path().to_path_buf()
    };
    let d = DictationDrafts::new(&recordings).keeping_drafts_in(store.clone(), "me");

    let draft = d.draft_from_spool(&spool(), &ears).unwrap();
    let u = store.unsaved(&draft.id).unwrap().unwrap();
    let me = store.holder("me").unwrap();
    let claim = u.claim.expect("the heard text is held in the draft");
    assert!(store.holds(&View::in_draft(u.draft), me, claim).unwrap());
    let heard = store
        .holdings(&Listing::Holder(me), &View::in_draft(u.draft), 10, None)
        .unwrap();
    assert_eq!(heard.holdings.len(), 1);
    assert!(
        common::words(&heard.holdings[0].text).contains(&"milk".to_string()),
        "{:?}",
        heard.holdings[0]
    );

    let m = d
        .save(&draft.id, "remember to buy oat milk", &store, "me", "")
        .unwrap();
    let u = store.unsaved(&draft.id).unwrap().unwrap();
    assert_eq!((u.state, u.saved_as), (DraftState::Merged, Some(m.id)));
    assert!(store.holds(&View::main(), me, m.id).unwrap());

    // Discarding a draft discards its copy.
    let other = d.draft_from_spool(&spool(), &ears).unwrap();
    d.discard(&other.id).unwrap();
    assert_eq!(
        store.unsaved(&other.id).unwrap().unwrap().state,
        DraftState::Discarded
    );

    // A crash between the draft file and its copy: the next start makes the copy. A copy whose
    // draft file is gone (a crash halfway through a discard) is discarded.
    let lost = DictationDrafts::new(&recordings)
        .draft_from_spool(&spool(), &ears)
        .unwrap();
    assert!(store.unsaved(&lost.id).unwrap().is_none());
    store.put_unsaved("42", "me", "an orphan", 5).unwrap();
    let r = d.recover(&|| Ok(ears.clone()), &store);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(store.unsaved_names().unwrap(), vec![lost.id.clone()]);
    assert!(store.unsaved(&lost.id).unwrap().unwrap().claim.is_some());
    assert_eq!(
        store.unsaved("42").unwrap().unwrap().state,
        DraftState::Discarded
    );
}
