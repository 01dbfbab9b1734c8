//! `models check`, `models convert-whisper`: the model files.

use umwelt::{models, Error, Result};

use crate::args::ConvertWhisperArgs;

pub(crate) fn check() -> Result<()> {
    let mut bad = 0;
    for (name, r) in models::check_all() {
        match r {
            Ok(p) => println!("ok       {name}  ({})", p.display()),
            Err(e) => {
                bad += 1;
                println!("PROBLEM  {name}: {e}");
            }
        }
    }
    if bad > 0 {
        return Err(Error::InvalidInput(format!(
            "{bad} model file(s) are missing or damaged"
        )));
    }
    Ok(())
}

pub(crate) fn convert_whisper(a: ConvertWhisperArgs) -> Result<()> {
    let h = models::whisper_ggml::convert_files(&a.ct2, &a.mel, &a.vocab, &a.out)?;
    eprintln!(
        "wrote {} ({} audio layers, {} text layers, vocabulary {})",
        a.out.display(),
        h.n_audio_layer,
        h.n_text_layer,
        h.n_vocab
    );
    Ok(())
}
