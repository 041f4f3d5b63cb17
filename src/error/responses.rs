//! The problem responses that many endpoints document in the same words,
//! named once: an endpoint's `responses(...)` lists them by name beside its
//! own. Each is the [`Problem`] document under `application/problem+json`.

use super::Problem;
use utoipa::IntoResponses;

/// 400: the body is not JSON of the request's shape.
#[derive(IntoResponses)]
#[response(
    status = 400,
    description = "Malformed JSON",
    content_type = "application/problem+json"
)]
pub struct MalformedJson(pub Problem);

/// 401: a node token that names no node.
#[derive(IntoResponses)]
#[response(
    status = 401,
    description = "Unknown node token",
    content_type = "application/problem+json"
)]
pub struct UnknownNodeToken(pub Problem);

/// 403: the route is for buyers (and admins).
#[derive(IntoResponses)]
#[response(
    status = 403,
    description = "Not a buyer",
    content_type = "application/problem+json"
)]
pub struct NotABuyer(pub Problem);

/// 403: the route is for providers and admins.
#[derive(IntoResponses)]
#[response(
    status = 403,
    description = "Not a provider or admin",
    content_type = "application/problem+json"
)]
pub struct NotAProviderOrAdmin(pub Problem);

/// 403: the route is for admins.
#[derive(IntoResponses)]
#[response(
    status = 403,
    description = "Not an admin",
    content_type = "application/problem+json"
)]
pub struct NotAnAdmin(pub Problem);

/// 403: the route is the agent protocol's, for node tokens only.
#[derive(IntoResponses)]
#[response(
    status = 403,
    description = "Not a node token",
    content_type = "application/problem+json"
)]
pub struct NotANodeToken(pub Problem);

/// 422: a body field is out of bounds or malformed; `errors` names each.
#[derive(IntoResponses)]
#[response(
    status = 422,
    description = "Invalid fields",
    content_type = "application/problem+json"
)]
pub struct InvalidFields(pub Problem);

/// 422: a query parameter is out of bounds or malformed; `errors` names each.
#[derive(IntoResponses)]
#[response(
    status = 422,
    description = "Invalid query",
    content_type = "application/problem+json"
)]
pub struct InvalidQuery(pub Problem);
