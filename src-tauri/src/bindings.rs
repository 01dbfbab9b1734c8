//! TypeScript declarations of every type that crosses the IPC boundary, generated from the Rust
//! types with ts-rs. The test below fails when `ui/src/bindings.ts` is out of date and rewrites
//! it when run with `UPDATE_BINDINGS=1`.

use ts_rs::TS;
use umwelt::bench::{
    BenchConfig, Delta, Machine, Measurement, Progress, Report, RunSummary, ScenarioView,
    TimingSeries,
};
use umwelt::settings::{Settings, ShortcutMode, SpeechModel};
use umwelt::speech::{Draft, Heard, InputDevice, Recovery};
use umwelt::store::ReembedProgress;
use umwelt::voice::{SpeechReport, VoiceInfo};
use umwelt::{Hit, Memory};

use crate::commands::voice::SpeakingState;
use crate::dictating::{DictationState, Level, Phase};
use crate::error::CommandError;
use crate::mic_check::MicrophoneLevel;

/// The contents of `ui/src/bindings.ts`.
pub fn typescript() -> String {
    let mut out = String::from(
        "// Generated from the Rust types by src-tauri/src/bindings.rs. Do not edit.\n\n",
    );
    for decl in [
        Memory::decl(),
        Hit::decl(),
        InputDevice::decl(),
        ReembedProgress::decl(),
        CommandError::decl(),
        BenchConfig::decl(),
        Progress::decl(),
        Measurement::decl(),
        Machine::decl(),
        Report::decl(),
        RunSummary::decl(),
        Delta::decl(),
        ScenarioView::decl(),
        TimingSeries::decl(),
        VoiceInfo::decl(),
        SpeechReport::decl(),
        SpeakingState::decl(),
        Settings::decl(),
        SpeechModel::decl(),
        ShortcutMode::decl(),
        Draft::decl(),
        Heard::decl(),
        Phase::decl(),
        DictationState::decl(),
        Level::decl(),
        MicrophoneLevel::decl(),
        Recovery::decl(),
    ] {
        out.push_str("export ");
        out.push_str(&decl);
        out.push_str("\n\n");
    }
    out.trim_end().to_string() + "\n"
}

#[cfg(test)]
mod tests {
    #[test]
    fn ui_bindings_are_up_to_date() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts");
        let want = super::typescript();
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(have, want, "ui/src/bindings.ts is stale: run `UPDATE_BINDINGS=1 cargo test -p umwelt-app bindings`");
    }
}
