//! A read-only view of an agent's folder with changes laid over some files, held in memory: a
//! follower checks what its files would be after an update (the chain, the fingerprint) before
//! it writes a byte of them.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::storage::{Storage, StorageFile};
use crate::storage_error::{StorageError, StorageErrorKind};

/// What one file becomes: `length` bytes, the file's own where no patch covers them (zeros past
/// its end), the patches' elsewhere.
#[derive(Debug, Clone, Default)]
pub(crate) struct Image {
    pub(crate) length: u64,
    pub(crate) patches: Vec<(u64, Vec<u8>)>,
}

/// The error of the view: the folder's own, or a write the view refuses.
#[derive(Debug)]
pub(crate) enum ViewError<E> {
    Inner(E),
    Refused,
}

impl<E: fmt::Display> fmt::Display for ViewError<E> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ViewError::Inner(error) => error.fmt(formatter),
            ViewError::Refused => formatter.write_str("a view of files to be is read-only"),
        }
    }
}

impl<E: StorageError> core::error::Error for ViewError<E> {}

impl<E: StorageError> StorageError for ViewError<E> {
    fn kind(&self) -> StorageErrorKind {
        match self {
            ViewError::Inner(error) => error.kind(),
            ViewError::Refused => StorageErrorKind::Unsupported,
        }
    }
}

/// The folder `inner` as it will be once `images` are written and `removed` files are gone.
/// Paths are as the engine names them (`agent-…/segment-….log`).
pub(crate) struct PatchedStorage<'a, S: Storage> {
    pub(crate) inner: &'a S,
    pub(crate) images: &'a [(String, Image)],
    pub(crate) removed: &'a [String],
}

/// A file of the view.
pub(crate) enum PatchedFile<'a, F> {
    Inner(F),
    Image { base: Option<F>, image: &'a Image },
}

impl<'a, S: Storage> PatchedStorage<'a, S> {
    fn image(&self, path: &str) -> Option<&'a Image> {
        self.images.iter().find(|(name, _)| name == path).map(|(_, image)| image)
    }
}

impl<'a, S: Storage> Storage for PatchedStorage<'a, S> {
    type File = PatchedFile<'a, S::File>;
    type Error = ViewError<S::Error>;

    fn open_file(&self, path: &str, create: bool) -> Result<Self::File, Self::Error> {
        if create || self.removed.iter().any(|name| name == path) {
            return Err(ViewError::Refused);
        }
        match self.image(path) {
            Some(image) => Ok(PatchedFile::Image { base: self.inner.open_file(path, false).ok(), image }),
            None => self.inner.open_file(path, false).map(PatchedFile::Inner).map_err(ViewError::Inner),
        }
    }

    fn exists(&self, path: &str) -> Result<bool, Self::Error> {
        if self.image(path).is_some() {
            return Ok(true);
        }
        if self.removed.iter().any(|name| name == path) {
            return Ok(false);
        }
        self.inner.exists(path).map_err(ViewError::Inner)
    }

    fn list(&self, folder: &str) -> Result<Vec<String>, Self::Error> {
        let mut names = self.inner.list(folder).map_err(ViewError::Inner)?;
        let in_folder =
            |path: &str| path.strip_prefix(folder).and_then(|rest| rest.strip_prefix('/')).map(String::from);
        names.retain(|name| !self.removed.iter().filter_map(|path| in_folder(path)).any(|gone| gone == *name));
        for (path, _) in self.images {
            if let Some(name) = in_folder(path) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        Ok(names)
    }

    fn create_folder(&self, _path: &str) -> Result<(), Self::Error> {
        Err(ViewError::Refused)
    }

    fn remove_folder(&self, _path: &str) -> Result<(), Self::Error> {
        Err(ViewError::Refused)
    }

    fn rename(&self, _from: &str, _to: &str) -> Result<(), Self::Error> {
        Err(ViewError::Refused)
    }

    fn remove_file(&self, _path: &str) -> Result<(), Self::Error> {
        Err(ViewError::Refused)
    }

    fn sync_folder(&self, _folder: &str) -> Result<(), Self::Error> {
        Err(ViewError::Refused)
    }

    fn fill_random(&self, _out: &mut [u8]) -> Result<(), Self::Error> {
        Err(ViewError::Refused)
    }
}

impl<F: StorageFile> StorageFile for PatchedFile<'_, F> {
    type Error = ViewError<F::Error>;

    fn len(&self) -> Result<u64, Self::Error> {
        match self {
            PatchedFile::Inner(file) => file.len().map_err(ViewError::Inner),
            PatchedFile::Image { image, .. } => Ok(image.length),
        }
    }

    fn read_at(&self, offset: u64, out: &mut [u8]) -> Result<(), Self::Error> {
        let (base, image) = match self {
            PatchedFile::Inner(file) => return file.read_at(offset, out).map_err(ViewError::Inner),
            PatchedFile::Image { base, image } => (base, image),
        };
        let end = offset.checked_add(out.len() as u64).filter(|end| *end <= image.length).ok_or(ViewError::Refused)?;
        out.fill(0);
        if let Some(file) = base {
            let base_length = file.len().map_err(ViewError::Inner)?.min(image.length);
            if offset < base_length {
                let count = usize::try_from(base_length - offset).unwrap_or(usize::MAX).min(out.len());
                let target = out.get_mut(..count).ok_or(ViewError::Refused)?;
                file.read_at(offset, target).map_err(ViewError::Inner)?;
            }
        }
        for (start, bytes) in &image.patches {
            let patch_end = start + bytes.len() as u64;
            let (from, to) = ((*start).max(offset), patch_end.min(end));
            if from >= to {
                continue;
            }
            let source = bytes.get(span(from - start, to - start)).ok_or(ViewError::Refused)?;
            let target = out.get_mut(span(from - offset, to - offset)).ok_or(ViewError::Refused)?;
            target.copy_from_slice(source);
        }
        Ok(())
    }

    fn write_at(&mut self, _offset: u64, _bytes: &[u8]) -> Result<(), Self::Error> {
        Err(ViewError::Refused)
    }

    fn sync(&mut self) -> Result<(), Self::Error> {
        Err(ViewError::Refused)
    }

    fn set_len(&mut self, _length: u64) -> Result<(), Self::Error> {
        Err(ViewError::Refused)
    }
}

/// A range of indexes from two offsets that both lie inside an in-memory buffer.
fn span(from: u64, to: u64) -> core::ops::Range<usize> {
    usize::try_from(from).unwrap_or(usize::MAX)..usize::try_from(to).unwrap_or(usize::MAX)
}
