//! The core's `Bucket` over an S3-compatible object store, through the `object_store` crate
//! (conditional writes as `If-None-Match: *` and `If-Match`), on a runtime of its own.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use cheesedb_core::replica::{Bucket, BucketError, ObjectTag};
use cheesedb_core::{Error, NameProblem};
use object_store::aws::{AmazonS3Builder, S3ConditionalPut};
use object_store::path::Path;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload, RetryConfig, UpdateVersion};

/// Where the object store is and how to sign in to it. Never taken from a command line: from
/// the standard variables or a file (see [`ObjectStoreConfig::from_env`]).
#[derive(Clone, Default)]
pub struct ObjectStoreConfig {
    /// The endpoint, such as `http://127.0.0.1:8333`; `None` for Amazon S3 itself.
    pub endpoint: Option<String>,
    /// The access key id.
    pub access_key_id: Option<String>,
    /// The secret access key.
    pub secret_access_key: Option<String>,
    /// The region (`us-east-1` when none is given).
    pub region: Option<String>,
}

impl std::fmt::Debug for ObjectStoreConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ObjectStoreConfig")
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

impl ObjectStoreConfig {
    /// From `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_REGION`.
    #[must_use]
    pub fn from_env() -> ObjectStoreConfig {
        let variable = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        ObjectStoreConfig {
            endpoint: variable("AWS_ENDPOINT_URL"),
            access_key_id: variable("AWS_ACCESS_KEY_ID"),
            secret_access_key: variable("AWS_SECRET_ACCESS_KEY"),
            region: variable("AWS_REGION").or_else(|| variable("AWS_DEFAULT_REGION")),
        }
    }

    /// This configuration with the blanks filled from `other`.
    #[must_use]
    pub fn or(self, other: ObjectStoreConfig) -> ObjectStoreConfig {
        ObjectStoreConfig {
            endpoint: self.endpoint.or(other.endpoint),
            access_key_id: self.access_key_id.or(other.access_key_id),
            secret_access_key: self.secret_access_key.or(other.secret_access_key),
            region: self.region.or(other.region),
        }
    }
}

/// A bucket and the prefix in it where a store's replicas live, from `s3://BUCKET/PREFIX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaLocation {
    /// The bucket's name.
    pub bucket: String,
    /// The path inside it (may be empty).
    pub prefix: String,
}

impl std::str::FromStr for ReplicaLocation {
    type Err = Error;

    fn from_str(text: &str) -> Result<ReplicaLocation, Error> {
        let malformed = Error::InvalidName { reason: NameProblem::ReplicaLocationMalformed };
        let rest = text.strip_prefix("s3://").ok_or(malformed.clone())?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let valid = |character: char| character.is_ascii_alphanumeric() || ".-_".contains(character);
        if bucket.is_empty() || !bucket.chars().all(valid) {
            return Err(malformed);
        }
        if prefix.split('/').any(|part| part == ".." || part == ".") {
            return Err(malformed);
        }
        Ok(ReplicaLocation { bucket: bucket.to_owned(), prefix: prefix.to_owned() })
    }
}

impl std::fmt::Display for ReplicaLocation {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "s3://{}/{}", self.bucket, self.prefix)
    }
}

/// An S3 bucket, reached over HTTP.
pub struct S3Bucket {
    store: Arc<dyn ObjectStore>,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for S3Bucket {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("S3Bucket").finish_non_exhaustive()
    }
}

/// Whether `endpoint` names this machine: the only place plain HTTP is accepted.
fn is_loopback(endpoint: &str) -> bool {
    let rest = endpoint.strip_prefix("http://").unwrap_or(endpoint);
    let authority = rest.split('/').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(host, _)| host),
    };
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|address| address.is_loopback())
}

impl S3Bucket {
    /// Connects to the bucket `location` names. Nothing is sent until the first call.
    ///
    /// # Errors
    ///
    /// `Error::ObjectStore` when the configuration cannot work: plain HTTP to an endpoint that
    /// is not this machine, or missing credentials.
    pub fn connect(location: &ReplicaLocation, config: &ObjectStoreConfig) -> Result<S3Bucket, Error> {
        let failed = |detail: String| Error::ObjectStore { detail };
        let mut builder = AmazonS3Builder::new()
            .with_bucket_name(&location.bucket)
            .with_region(config.region.as_deref().unwrap_or("us-east-1"))
            .with_conditional_put(S3ConditionalPut::ETagMatch)
            .with_retry(RetryConfig {
                max_retries: 3,
                retry_timeout: Duration::from_secs(20),
                ..RetryConfig::default()
            });
        if let Some(endpoint) = &config.endpoint {
            if endpoint.starts_with("http://") && !is_loopback(endpoint) {
                return Err(failed(format!(
                    "plain HTTP is accepted only for an endpoint on this machine, not {endpoint}: use https://"
                )));
            }
            builder = builder.with_endpoint(endpoint).with_allow_http(endpoint.starts_with("http://"));
        }
        match (&config.access_key_id, &config.secret_access_key) {
            (Some(id), Some(secret)) => builder = builder.with_access_key_id(id).with_secret_access_key(secret),
            _ => {
                return Err(failed(String::from(
                    "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the data folder's object-store.toml)",
                )))
            }
        }
        let store = builder.build().map_err(|error| failed(error.to_string()))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| failed(format!("cannot start the object store's runtime: {error}")))?;
        Ok(S3Bucket { store: Arc::new(store), runtime })
    }
}

fn unavailable(error: &object_store::Error) -> BucketError {
    BucketError::Unavailable(error.to_string())
}

fn tag_of(e_tag: Option<String>) -> ObjectTag {
    ObjectTag(e_tag.unwrap_or_default())
}

impl S3Bucket {
    /// A conditional put: `Ok` with the new tag, `PreconditionFailed` when the condition failed.
    fn put(&mut self, key: &str, bytes: &[u8], mode: PutMode) -> Result<ObjectTag, BucketError> {
        // A replacement of an object that is gone fails its condition; a create never does so
        // (a missing bucket is not a lost race).
        let replacing = matches!(mode, PutMode::Update(_));
        let options = PutOptions { mode, ..PutOptions::default() };
        let payload = PutPayload::from(bytes.to_vec());
        match self.runtime.block_on(self.store.put_opts(&Path::from(key), payload, options)) {
            Ok(result) => Ok(tag_of(result.e_tag)),
            Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => {
                Err(BucketError::PreconditionFailed)
            }
            Err(object_store::Error::NotFound { .. }) if replacing => Err(BucketError::PreconditionFailed),
            Err(error) => Err(unavailable(&error)),
        }
    }
}

impl Bucket for S3Bucket {
    fn put_new(&mut self, key: &str, bytes: &[u8]) -> Result<ObjectTag, BucketError> {
        self.put(key, bytes, PutMode::Create)
    }

    fn put_replacing(&mut self, key: &str, bytes: &[u8], expected: &ObjectTag) -> Result<ObjectTag, BucketError> {
        let version = UpdateVersion { e_tag: Some(expected.0.clone()), version: None };
        self.put(key, bytes, PutMode::Update(version))
    }

    fn get(&mut self, key: &str) -> Result<Option<(Vec<u8>, ObjectTag)>, BucketError> {
        let path = Path::from(key);
        let fetched = self.runtime.block_on(async {
            let result = self.store.get(&path).await?;
            let tag = result.meta.e_tag.clone();
            let bytes = result.bytes().await?;
            Ok::<_, object_store::Error>((bytes.to_vec(), tag_of(tag)))
        });
        match fetched {
            Ok(found) => Ok(Some(found)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(error) => Err(unavailable(&error)),
        }
    }

    fn delete(&mut self, key: &str) -> Result<(), BucketError> {
        match self.runtime.block_on(self.store.delete(&Path::from(key))) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(unavailable(&error)),
        }
    }

    fn list(&mut self, prefix: &str) -> Result<Vec<String>, BucketError> {
        use futures::TryStreamExt;
        let path = Path::from(prefix);
        let listed =
            self.runtime.block_on(self.store.list(Some(&path)).map_ok(|meta| meta.location.to_string()).try_collect());
        listed.map_err(|error| unavailable(&error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_and_refuse_what_is_not_one() {
        let location: ReplicaLocation = "s3://fleet/primary/a".parse().unwrap();
        assert_eq!((location.bucket.as_str(), location.prefix.as_str()), ("fleet", "primary/a"));
        assert_eq!("s3://fleet".parse::<ReplicaLocation>().unwrap().prefix, "");
        for bad in ["fleet/a", "s3://", "s3:///a", "s3://fl eet/a", "s3://fleet/../a", "http://fleet"] {
            assert!(bad.parse::<ReplicaLocation>().is_err(), "{bad}");
        }
    }

    #[test]
    fn plain_http_is_for_this_machine_only() {
        for endpoint in ["http://127.0.0.1:8333", "http://localhost:9000", "http://[::1]:80/x"] {
            assert!(is_loopback(endpoint), "{endpoint}");
        }
        for endpoint in ["http://10.0.0.1:8333", "http://example.com", "http://127.0.0.1.example.com"] {
            assert!(!is_loopback(endpoint), "{endpoint}");
        }
        let config = ObjectStoreConfig {
            endpoint: Some(String::from("http://10.1.2.3:8333")),
            access_key_id: Some(String::from("a")),
            secret_access_key: Some(String::from("b")),
            region: None,
        };
        let location = ReplicaLocation { bucket: String::from("b"), prefix: String::new() };
        assert!(matches!(S3Bucket::connect(&location, &config), Err(Error::ObjectStore { .. })));
    }
}
