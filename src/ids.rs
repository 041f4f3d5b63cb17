//! The API's ids where they enter: a path's `{id}` is parsed once into its
//! own type (`gpuex_wire::ids`), and one that is not a UUID is answered as
//! an unknown one is, 404 `not_found` "no such …": a malformed id names
//! nothing, whichever route it reaches. (An id in a body or a query is a
//! field: 422 naming it, as every malformed field.)

pub use gpuex_wire::ids::*;

use crate::error::{ApiError, Path};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;

/// The one path parameter of a route, as the id type `T`.
pub struct PathId<T>(pub T);

impl<T, S> FromRequestParts<S> for PathId<T>
where
    T: TypedId,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path(raw) = Path::<String>::from_request_parts(parts, state).await?;
        parse::<T>(&raw).map(PathId)
    }
}

/// `raw` as the id type `T`, or the 404 an unknown `T` gets.
pub fn parse<T: TypedId>(raw: &str) -> Result<T, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::NotFound(format!("no such {}", T::NOUN)))
}
