//! Writing a file the user asked for (an export) where they chose: the bytes go to a private
//! temporary file (0600, created exclusively) in the destination's folder, synced, then renamed
//! into place, so there is never half a file under the chosen name, nor a plaintext copy left
//! behind when anything fails. An existing file (or link) under that name is replaced only when
//! the user confirmed it ([`Overwrite::Yes`]); a rename replaces a link itself and never writes
//! through it.

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Whether an existing file under the chosen name may be replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overwrite {
    /// No: an existing file is [`Error::Exists`], and nothing is written.
    No,
    /// Yes: the user confirmed that it may be replaced.
    Yes,
}

/// Write `bytes` as the file `path` (see the module's comment).
pub fn write_new_file(path: &Path, bytes: &[u8], overwrite: Overwrite) -> Result<()> {
    let shown = path.display();
    let Some(name) = path.file_name() else {
        return Err(Error::InvalidInput(format!(
            "{shown} names no file: choose a file name"
        )));
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(Error::InvalidInput(format!(
                "{shown} is a folder: choose a file name for the export"
            )))
        }
        Ok(_) if overwrite == Overwrite::No => return Err(Error::Exists(path.to_path_buf())),
        _ => {}
    }
    let io = |what: &str| Error::io(format!("{what} {shown}"));
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".part")
        .tempfile_in(dir)
        .map_err(io("writing"))?;
    // Dropping `tmp` on any error below removes the temporary file.
    tmp.write_all(bytes).map_err(io("writing"))?;
    tmp.as_file().sync_all().map_err(io("writing"))?;
    match overwrite {
        Overwrite::Yes => tmp.persist(path).map(drop),
        Overwrite::No => tmp.persist_noclobber(path).map(drop),
    }
    .map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            Error::Exists(path.to_path_buf())
        } else {
            io("writing")(e.error)
        }
    })?;
    crate::audio::sync_dir(dir).map_err(io("writing"))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".part"))
            .collect()
    }

    #[test]
    fn an_existing_file_is_kept_unless_the_user_confirmed_and_a_new_one_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("umwelt-2026-12-04.json");
        write_new_file(&file, b"first", Overwrite::No).unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
        let e = write_new_file(&file, b"second", Overwrite::No).unwrap_err();
        assert!(matches!(e, Error::Exists(_)), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), b"first");
        write_new_file(&file, b"second", Overwrite::Yes).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"second");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_link_is_not_written_through_and_a_folder_leaves_no_part_behind() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("theirs.txt");
        std::fs::write(&theirs, b"the user's own").unwrap();
        let link = dir.path().join("export.json");
        std::os::unix::fs::symlink(&theirs, &link).unwrap();
        assert!(matches!(
            write_new_file(&link, b"x", Overwrite::No),
            Err(Error::Exists(_))
        ));
        write_new_file(&link, b"export", Overwrite::Yes).unwrap();
        assert_eq!(std::fs::read(&theirs).unwrap(), b"the user's own");
        assert!(!std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let folder = dir.path().join("a folder");
        std::fs::create_dir(&folder).unwrap();
        let e = write_new_file(&folder, b"x", Overwrite::Yes).unwrap_err();
        assert!(e.to_string().contains("is a folder"), "{e}");
        let missing = dir.path().join("no such folder").join("x.json");
        assert!(write_new_file(&missing, b"x", Overwrite::Yes).is_err());
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
    }
}
