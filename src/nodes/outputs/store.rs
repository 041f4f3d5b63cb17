//! Where outputs' bytes live: a folder, or S3-compatible storage, both
//! through `object_store` (its multipart upload streams a file of any size
//! without holding it in memory, and its local store writes to a temporary
//! file renamed into place, so a broken upload never shows half a file).

use anyhow::Context;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, WriteMultipart};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// The outputs store.
#[derive(Clone)]
pub struct OutputStore {
    inner: Arc<dyn ObjectStore>,
    /// Where it is, for the logs.
    pub location: String,
}

/// Why an upload was not stored.
#[derive(Debug, thiserror::Error)]
pub enum PutError {
    #[error("the file is over the {0} bytes the lease has left")]
    TooLarge(u64),
    #[error("the upload broke off: {0}")]
    Body(String),
    #[error(transparent)]
    Store(#[from] anyhow::Error),
}

impl OutputStore {
    /// `s3://bucket/prefix` or a folder (made when missing); `None`: beside
    /// the SQLite database `database_url` names, else under the temporary folder.
    pub fn open(configured: Option<&str>, database_url: &str) -> anyhow::Result<OutputStore> {
        if let Some(url) = configured.filter(|u| u.starts_with("s3://")) {
            let parsed = url::Url::parse(url).with_context(|| format!("`{url}` is not a URL"))?;
            let (store, prefix) = object_store::parse_url_opts(
                &parsed,
                std::env::vars().filter(|(k, _)| k.starts_with("AWS_")),
            )
            .with_context(|| format!("cannot open the outputs store {url}"))?;
            let inner: Arc<dyn ObjectStore> = if prefix.as_ref().is_empty() {
                Arc::from(store)
            } else {
                Arc::new(object_store::prefix::PrefixStore::new(store, prefix))
            };
            return Ok(OutputStore {
                inner,
                location: url.to_string(),
            });
        }
        let folder = match configured {
            Some(dir) => std::path::PathBuf::from(dir),
            None => default_folder(database_url),
        };
        std::fs::create_dir_all(&folder)
            .with_context(|| format!("cannot create the outputs folder {}", folder.display()))?;
        let inner = object_store::local::LocalFileSystem::new_with_prefix(&folder)
            .with_context(|| format!("cannot open the outputs folder {}", folder.display()))?;
        Ok(OutputStore {
            inner: Arc::new(inner),
            location: folder.display().to_string(),
        })
    }

    /// Store `body` at `key`, at most `cap` bytes of it; its size and sha256.
    pub async fn put(
        &self,
        key: &str,
        mut body: impl Stream<Item = Result<Bytes, String>> + Unpin,
        cap: u64,
    ) -> Result<(u64, String), PutError> {
        let path = ObjectPath::from(key);
        let upload = self
            .inner
            .put_multipart(&path)
            .await
            .context("cannot begin the upload")?;
        let mut writer = WriteMultipart::new(upload);
        let mut hasher = Sha256::new();
        let mut size: u64 = 0;
        while let Some(chunk) = body.next().await {
            let failed = match chunk {
                Ok(bytes) => {
                    size = size.saturating_add(bytes.len() as u64);
                    if size > cap {
                        Some(PutError::TooLarge(cap))
                    } else {
                        hasher.update(&bytes);
                        // Backpressure: at most a few parts in flight.
                        match writer.wait_for_capacity(4).await {
                            Ok(()) => {
                                writer.put(bytes);
                                None
                            }
                            Err(e) => Some(PutError::Store(e.into())),
                        }
                    }
                }
                Err(e) => Some(PutError::Body(e)),
            };
            if let Some(e) = failed {
                let _ = writer.abort().await;
                return Err(e);
            }
        }
        writer.finish().await.context("cannot finish the upload")?;
        Ok((size, hex::encode(hasher.finalize())))
    }

    /// The bytes at `key`, streamed.
    pub async fn get(
        &self,
        key: &str,
    ) -> anyhow::Result<impl Stream<Item = Result<Bytes, std::io::Error>>> {
        let got = self
            .inner
            .get(&ObjectPath::from(key))
            .await
            .with_context(|| format!("cannot read {key} from the outputs store"))?;
        Ok(got.into_stream().map(|r| r.map_err(std::io::Error::other)))
    }

    /// Remove `key`; one already gone is fine.
    pub async fn delete(&self, key: &str) -> anyhow::Result<()> {
        match self.inner.delete(&ObjectPath::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot remove {key} from the outputs store")),
        }
    }
}

/// `outputs/` beside a SQLite database file; `$TMPDIR/gpuex-outputs` for an
/// in-memory one or PostgreSQL.
fn default_folder(database_url: &str) -> std::path::PathBuf {
    let file = database_url
        .strip_prefix("sqlite://")
        .or_else(|| database_url.strip_prefix("sqlite:"))
        .map(|rest| rest.split('?').next().unwrap_or(rest))
        .filter(|f| !f.is_empty() && !f.contains(":memory:"));
    match file.and_then(|f| std::path::Path::new(f).parent()) {
        Some(dir) => dir.join("outputs"),
        None => std::env::temp_dir().join("gpuex-outputs"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_go_beside_a_sqlite_file_and_under_tmp_otherwise() {
        assert_eq!(
            default_folder("sqlite://./data/gpuex.db"),
            std::path::Path::new("./data/outputs")
        );
        assert_eq!(
            default_folder("sqlite:/var/lib/gpuex/db.sqlite?mode=rwc"),
            std::path::Path::new("/var/lib/gpuex/outputs")
        );
        let tmp = std::env::temp_dir().join("gpuex-outputs");
        assert_eq!(default_folder("sqlite::memory:"), tmp);
        assert_eq!(default_folder("postgres://db/gpuex"), tmp);
    }

    #[tokio::test]
    async fn a_file_over_its_cap_is_refused_and_not_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = dir.path().to_string_lossy().into_owned();
        let store = OutputStore::open(Some(&url), "postgres://x").expect("store");
        let chunks =
            || futures::stream::iter((0..4).map(|_| Ok::<_, String>(Bytes::from(vec![1u8; 1000]))));
        let (size, sha) = store.put("leases/a/ok", chunks(), 4000).await.expect("put");
        assert_eq!(size, 4000);
        assert_eq!(sha, hex::encode(Sha256::digest(vec![1u8; 4000])));
        let err = store.put("leases/a/big", chunks(), 3999).await.unwrap_err();
        assert!(matches!(err, PutError::TooLarge(3999)), "{err}");
        assert!(store.get("leases/a/big").await.is_err());
        let back: Vec<Bytes> = store
            .get("leases/a/ok")
            .await
            .expect("get")
            .map(|c| c.expect("chunk"))
            .collect()
            .await;
        assert_eq!(back.concat(), vec![1u8; 4000]);
    }
}
