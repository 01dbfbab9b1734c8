//! Long work on the user's files (transcribing an audio file, importing a folder of notes): one
//! at a time, each with a Cancel that the window can press.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{CmdResult, CommandError, ErrorKind};

/// Whether a file job runs, and its cancel flag.
#[derive(Default)]
pub struct Jobs {
    running: Arc<AtomicBool>,
    cancel: Arc<AtomicBool>,
}

/// Held while a job runs; dropping it frees the slot.
pub struct JobGuard(Arc<AtomicBool>);

impl Drop for JobGuard {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Jobs {
    /// Take the slot (an error if another job runs), with a fresh cancel flag.
    pub fn start(&self) -> CmdResult<(JobGuard, Arc<AtomicBool>)> {
        if self.running.swap(true, Ordering::AcqRel) {
            return Err(CommandError::new(
                ErrorKind::Busy,
                "Another file is being transcribed or imported. Wait for it to finish, or press Cancel.",
            ));
        }
        self.cancel.store(false, Ordering::Relaxed);
        Ok((JobGuard(self.running.clone()), self.cancel.clone()))
    }

    /// Stop the running job (within a batch or a stretch of audio).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_job_at_a_time_and_a_fresh_cancel_each() {
        let jobs = Jobs::default();
        let (guard, cancel) = jobs.start().unwrap();
        assert!(jobs.start().is_err());
        jobs.cancel();
        assert!(cancel.load(Ordering::Relaxed));
        drop(guard);
        let (_guard, cancel) = jobs.start().unwrap();
        assert!(!cancel.load(Ordering::Relaxed));
    }
}
