//! The object store's settings as the command reads them: the standard variables, then the
//! data folder's `object-store.toml`.

use std::path::Path;

use cheesedb::replication::{ObjectStoreConfig, ReplicaLocation, S3Bucket};
use serde::Deserialize;

use crate::failure::Failure;

/// The data folder's file that may hold the object store's endpoint and credentials.
pub const OBJECT_STORE_FILE: &str = "object-store.toml";

/// `object-store.toml`: the same four settings as the standard variables, which win over it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ObjectStoreFile {
    endpoint: Option<String>,
    access_key_id: Option<String>,
    secret_access_key: Option<String>,
    region: Option<String>,
}

/// The object store's settings: the standard variables, then the data folder's file.
fn object_store_config(folder: &Path) -> Result<ObjectStoreConfig, Failure> {
    let file: ObjectStoreFile = crate::config_file::load(folder, OBJECT_STORE_FILE)?.unwrap_or_default();
    let from_file = ObjectStoreConfig {
        endpoint: file.endpoint,
        access_key_id: file.access_key_id,
        secret_access_key: file.secret_access_key,
        region: file.region,
    };
    Ok(ObjectStoreConfig::from_env().or(from_file))
}

/// The bucket `location` names, with the settings of `folder`.
pub fn connect(location: &ReplicaLocation, folder: &Path) -> Result<S3Bucket, Failure> {
    Ok(S3Bucket::connect(location, &object_store_config(folder)?)?)
}
