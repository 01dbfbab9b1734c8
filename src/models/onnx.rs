//! ONNX Runtime, shared by every model that runs on it (the embedder, the voice activity
//! detector, the Kokoro voice): the process-wide environment, loading `libonnxruntime` from the
//! model resolver, and sessions with the thread count the optimisations choose.

use std::path::Path;
use std::sync::OnceLock;

use ort::session::Session;

use crate::error::{Error, Result};
use crate::{models, optimisations};

static ORT_ENV: OnceLock<std::result::Result<ort::environment::Environment, String>> =
    OnceLock::new();

/// The process-wide ONNX Runtime environment, loading `libonnxruntime` from the model resolver.
pub fn ort_environment() -> Result<ort::environment::Environment> {
    ORT_ENV
        .get_or_init(|| {
            let lib = models::resolve(models::ONNXRUNTIME_LIB).map_err(|e| e.to_string())?;
            let builder = ort::init_from(&lib)
                .map_err(|e| format!("could not load ONNX Runtime from {}: {e}", lib.display()))?;
            builder
                .with_name("umwelt")
                .with_telemetry(false)
                .build()
                .map_err(|e| format!("could not start ONNX Runtime: {e}"))
        })
        .clone()
        .map_err(|detail| Error::ModelLoad {
            name: models::ONNXRUNTIME_LIB.into(),
            detail,
        })
}

/// An ONNX Runtime session for the model file at `model` (`name` for messages), with every core
/// when the optimisations are on. A file ONNX Runtime refuses is [`Error::ModelCorrupt`].
pub fn ort_session(model: &Path, name: &str) -> Result<Session> {
    ort_session_threads(
        model,
        name,
        optimisations::enabled().then(optimisations::threads),
    )
}

/// As [`ort_session`], with `threads` intra-op threads (`None`: ONNX Runtime's default). A model
/// as small as the voice activity detector runs fastest on one.
pub fn ort_session_threads(model: &Path, name: &str, threads: Option<usize>) -> Result<Session> {
    let env = ort_environment()?;
    let mut builder = Session::builder(&env).map_err(load_err(name))?;
    if let Some(n) = threads {
        builder = builder
            .with_intra_threads(n)
            .map_err(|e| load_err(name)(e.into()))?;
    }
    builder
        .commit_from_file(model)
        .map_err(|e| Error::ModelCorrupt {
            path: model.into(),
            detail: format!("ONNX Runtime could not load it: {e}"),
        })
}

/// An ONNX Runtime error while loading or running the model `name`, as [`Error::ModelLoad`].
pub(crate) fn load_err(name: &str) -> impl Fn(ort::Error) -> Error + '_ {
    move |e| Error::ModelLoad {
        name: name.to_string(),
        detail: e.to_string(),
    }
}
