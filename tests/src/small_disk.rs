//! [`SmallDisk`]: a tmpfs of a few MiB mounted for one test, so a test can fill a real disk.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted on a fresh temporary folder, unmounted when dropped.
pub struct SmallDisk {
    mount_point: tempfile::TempDir,
}

impl SmallDisk {
    /// Mounts a tmpfs of `size_mebibytes` MiB, or says why it cannot (not root, no mount
    /// command, a container that forbids mounting).
    pub fn mount(size_mebibytes: u64) -> Result<SmallDisk, String> {
        let mount_point = tempfile::tempdir().map_err(|error| format!("no temporary folder: {error}"))?;
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_mebibytes}m,mode=0700"), "tmpfs"])
            .arg(mount_point.path())
            .output()
            .map_err(|error| format!("cannot run mount: {error}"))?;
        if !output.status.success() {
            return Err(format!("mount refused: {}", String::from_utf8_lossy(&output.stderr).trim()));
        }
        Ok(SmallDisk { mount_point })
    }

    /// The root of the mounted file system.
    pub fn path(&self) -> &Path {
        self.mount_point.path()
    }

    /// Fills what is left of the disk with a file at `name`, and returns its path: removing
    /// it frees the space again.
    pub fn fill(&self, name: &str) -> PathBuf {
        use std::io::Write;
        let path = self.path().join(name);
        let Ok(mut filler) = std::fs::File::create(&path) else { return path };
        let block = vec![0x55u8; 64 * 1024];
        while filler.write_all(&block).is_ok() {}
        let small = [0x55u8; 512];
        while filler.write_all(&small).is_ok() {}
        let _ = filler.sync_all();
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mount_point.path()).status();
    }
}
