//! What every operation of the OpenAPI document shares, added once here
//! rather than repeated in each `#[utoipa::path]`: the errors the middleware
//! and extractors give any request (405, 408, 413, 415, 429, a path id that
//! is not UTF-8), and an example problem on every error response, rendered by
//! `ApiError` itself so the example is what the server really sends.

use crate::error::{ApiError, FieldError};
use axum::http::StatusCode;
use serde_json::{json, Map, Value};
use utoipa::openapi::OpenApi;

const PROBLEM: &str = "application/problem+json";

/// The errors every operation can answer, by status, each a component
/// response: (name, status, description, example error).
fn shared() -> Vec<(&'static str, StatusCode, &'static str, ApiError)> {
    vec![
        (
            "MethodNotAllowed",
            StatusCode::METHOD_NOT_ALLOWED,
            "The path does not take this method",
            bare(StatusCode::METHOD_NOT_ALLOWED),
        ),
        (
            "RequestTimeout",
            StatusCode::REQUEST_TIMEOUT,
            "The request took longer than `--request-timeout-s`",
            bare(StatusCode::REQUEST_TIMEOUT),
        ),
        (
            "PayloadTooLarge",
            StatusCode::PAYLOAD_TOO_LARGE,
            "The body is larger than `--body-limit`",
            bare(StatusCode::PAYLOAD_TOO_LARGE),
        ),
        (
            "UnsupportedMediaType",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "The body is not `application/json` (or `application/…+json`)",
            ApiError::Refused {
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                code: "unsupported_media_type",
                detail: "expected a body with Content-Type: application/json".into(),
            },
        ),
        (
            "TooManyRequests",
            StatusCode::TOO_MANY_REQUESTS,
            "Too many requests; `Retry-After` says when to try again",
            ApiError::TooManyRequests { retry_after_s: 60 },
        ),
    ]
}

/// The problem the outermost middleware gives a bare error of `status`.
pub(super) fn bare(status: StatusCode) -> ApiError {
    let (code, detail) = match status {
        StatusCode::METHOD_NOT_ALLOWED => (
            "method_not_allowed",
            "this endpoint does not take this method",
        ),
        StatusCode::REQUEST_TIMEOUT => ("request_timeout", "the request took too long"),
        StatusCode::PAYLOAD_TOO_LARGE => ("payload_too_large", "the request body is too large"),
        _ => ("error", "the request failed"),
    };
    ApiError::Refused {
        status,
        code,
        detail: detail.into(),
    }
}

/// An example of what an operation's own documented error of `status` looks like.
fn example_for(status: u16) -> Option<ApiError> {
    Some(match status {
        400 => ApiError::Malformed {
            detail: "the body is not valid JSON: EOF while parsing an object".into(),
            errors: vec![FieldError::new("body", "EOF while parsing an object")],
        },
        401 => ApiError::Unauthorized("missing Authorization: Bearer token".into()),
        403 => ApiError::Forbidden("this endpoint is not for this role".into()),
        404 => ApiError::NotFound("no such resource".into()),
        409 => ApiError::Conflict("the resource is not in a state that allows this".into()),
        413 => ApiError::Refused {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            code: "outputs_quota",
            detail: "a lease's outputs may weigh 10737418240 bytes in all; 0 are left".into(),
        },
        422 => ApiError::field("field", "must be between 1 and 500"),
        429 => ApiError::TooManyRequests { retry_after_s: 60 },
        503 => ApiError::Refused {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code: "not_ready",
            detail: "the database is unreachable".into(),
        },
        _ => return None,
    })
}

fn problem_json(error: &ApiError) -> Value {
    serde_json::to_value(error.to_problem()).unwrap_or(Value::Null)
}

/// `doc` with the shared responses and the examples added.
pub fn complete(doc: OpenApi) -> OpenApi {
    let Ok(mut value) = serde_json::to_value(&doc) else {
        return doc;
    };
    add_shared(&mut value);
    whole_tagged_unions(&mut value);
    // utoipa cannot read back every schema it can write (a field schema with
    // no type, say); the document is then served without the shared
    // responses and examples, which the contract tests catch.
    match serde_json::from_value(value) {
        Ok(completed) => completed,
        Err(e) => {
            tracing::error!(error = %e, "the OpenAPI document could not be completed");
            doc
        }
    }
}

/// A struct with a `#[serde(flatten)]`ed tagged enum comes out of utoipa as
/// `allOf: [{$ref: <the enum's oneOf>}, {<the struct's own fields>}]`, which
/// code generators refuse ("cannot take allOf a non-object": the Python
/// client lost the agent's heartbeat answer and status reports). Written
/// instead as a `oneOf` of whole objects with a discriminator, one component
/// a variant (`Assignment` + `start` = `AssignmentStart`), each with the
/// struct's fields: the same JSON, said in a way every generator reads. The
/// enum's own component goes when nothing refers to it any more.
fn whole_tagged_unions(doc: &mut Value) {
    let Some(schemas) = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .cloned()
    else {
        return;
    };
    let mut replaced = Map::new();
    let mut added = Map::new();
    let mut enums = Vec::new();
    for (name, schema) in &schemas {
        let Some([first, own]) = schema["allOf"].as_array().map(Vec::as_slice) else {
            continue;
        };
        let Some(target) = first["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix("#/components/schemas/"))
        else {
            continue;
        };
        let Some(variants) = schemas.get(target).and_then(|t| t["oneOf"].as_array()) else {
            continue;
        };
        if own["type"] != "object" || variants.iter().any(|v| v["type"] != "object") {
            continue;
        }
        // The tag: the one property every variant pins to a single value.
        let tag_of = |v: &Value| -> Option<(String, String)> {
            v["properties"].as_object()?.iter().find_map(|(k, p)| {
                match p["enum"].as_array().map(Vec::as_slice) {
                    Some([Value::String(value)]) => Some((k.clone(), value.clone())),
                    _ => None,
                }
            })
        };
        let Some(tags) = variants.iter().map(tag_of).collect::<Option<Vec<_>>>() else {
            continue;
        };
        let tag = tags[0].0.clone();
        if tags.iter().any(|(k, _)| *k != tag) {
            continue;
        }
        let mut one_of = Vec::new();
        let mut mapping = Map::new();
        for (variant, (_, value)) in variants.iter().zip(&tags) {
            let camel: String = value
                .split('_')
                .map(|w| {
                    let mut c = w.chars();
                    c.next()
                        .map(|f| f.to_uppercase().chain(c).collect::<String>())
                        .unwrap_or_default()
                })
                .collect();
            let variant_name = format!("{name}{camel}");
            if schemas.contains_key(&variant_name) || added.contains_key(&variant_name) {
                return;
            }
            let mut merged = variant.clone();
            let mut properties = merged["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            if let Some(extra) = own["properties"].as_object() {
                properties.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            let mut required: Vec<Value> = own["required"].as_array().cloned().unwrap_or_default();
            required.extend(merged["required"].as_array().cloned().unwrap_or_default());
            merged["properties"] = Value::Object(properties);
            merged["required"] = Value::Array(required);
            let reference = format!("#/components/schemas/{variant_name}");
            one_of.push(json!({"$ref": reference}));
            mapping.insert(value.clone(), Value::String(reference));
            added.insert(variant_name, merged);
        }
        let mut whole = Map::new();
        whole.insert("oneOf".into(), Value::Array(one_of));
        whole.insert(
            "discriminator".into(),
            json!({"propertyName": tag, "mapping": mapping}),
        );
        if let Some(description) = schema.get("description") {
            whole.insert("description".into(), description.clone());
        }
        replaced.insert(name.clone(), Value::Object(whole));
        enums.push(target.to_owned());
    }
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    schemas.extend(replaced);
    schemas.extend(added);
    for target in enums {
        let reference = Value::String(format!("#/components/schemas/{target}"));
        if !refers_to(doc, &reference) {
            if let Some(schemas) = doc
                .pointer_mut("/components/schemas")
                .and_then(Value::as_object_mut)
            {
                schemas.remove(&target);
            }
        }
    }
}

fn refers_to(value: &Value, reference: &Value) -> bool {
    match value {
        Value::Object(fields) => {
            fields.get("$ref") == Some(reference)
                || fields.values().any(|v| refers_to(v, reference))
        }
        Value::Array(items) => items.iter().any(|v| refers_to(v, reference)),
        _ => false,
    }
}

/// The range of each sized integer format (with `non_strict_integers`,
/// utoipa names Rust's unsigned types as formats of their own), stated as `minimum` and
/// `maximum` where the annotation gave none, so a client knows that a `u32`
/// takes up to 4 294 967 295 and a `u8` no more than 255.
fn bound_integers(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            // utoipa 5 spells these `u-int32`; OpenAPI's registry says `uint32`.
            let format = fields.get("format").and_then(Value::as_str);
            if let Some(unsigned) = format.and_then(|f| f.strip_prefix("u-int")) {
                let spelled = format!("uint{unsigned}");
                fields.insert("format".into(), Value::String(spelled));
            }
            let range: Option<(i128, i128)> = match fields.get("format").and_then(Value::as_str) {
                Some("int8") => Some((i8::MIN.into(), i8::MAX.into())),
                Some("int16") => Some((i16::MIN.into(), i16::MAX.into())),
                Some("int32") => Some((i32::MIN.into(), i32::MAX.into())),
                Some("int64") => Some((i64::MIN.into(), i64::MAX.into())),
                Some("uint8") => Some((0, u8::MAX.into())),
                Some("uint16") => Some((0, u16::MAX.into())),
                Some("uint32") => Some((0, u32::MAX.into())),
                Some("uint64") => Some((0, u64::MAX.into())),
                _ => None,
            };
            if let Some((low, high)) = range {
                let number = |n: i128| match u64::try_from(n) {
                    Ok(n) => Value::from(n),
                    Err(_) => i64::try_from(n).map(Value::from).unwrap_or(Value::Null),
                };
                fields.entry("minimum").or_insert_with(|| number(low));
                fields.entry("maximum").or_insert_with(|| number(high));
            }
            fields.values_mut().for_each(bound_integers);
        }
        Value::Array(items) => items.iter_mut().for_each(bound_integers),
        _ => {}
    }
}

fn add_shared(doc: &mut Value) {
    if let Some(schemas) = doc.pointer_mut("/components/schemas") {
        bound_integers(schemas);
    }
    if let Some(paths) = doc.get_mut("paths") {
        bound_integers(paths);
    }
    let mut responses = Map::new();
    for (name, status, description, error) in shared() {
        let mut response = json!({
            "description": description,
            "content": {PROBLEM: {
                "schema": {"$ref": "#/components/schemas/Problem"},
                "example": problem_json(&error),
            }},
        });
        if status == StatusCode::TOO_MANY_REQUESTS {
            response["headers"] = json!({"Retry-After": {
                "description": "Seconds to wait before trying again",
                "schema": {"type": "integer", "minimum": 1},
            }});
        }
        responses.insert(name.to_owned(), response);
    }
    if let Some(components) = doc.get_mut("components").and_then(Value::as_object_mut) {
        components.insert("responses".into(), Value::Object(responses));
    }
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for item in paths.values_mut() {
        let Some(methods) = item.as_object_mut() else {
            continue;
        };
        for op in methods.values_mut() {
            add_to_operation(op);
        }
    }
}

/// Examples of response bodies by schema name: the agent protocol's, from
/// its README. (The agent's request examples name a node and leases of their
/// own, which no real server has, so they are not offered as requests.)
fn body_examples() -> Vec<(String, Value)> {
    crate::protocol::readme_examples()
        .into_iter()
        .map(|(name, value)| match name.as_str() {
            "RegisterRequest" | "RegisterResponse" => (format!("Agent{name}"), value),
            _ => (name, value),
        })
        .collect()
}

fn add_to_operation(op: &mut Value) {
    let takes_body = op.get("requestBody").is_some();
    let needs_caller = op["security"]
        .as_array()
        .is_some_and(|schemes| schemes.iter().any(|s| s.get("bearer").is_some()));
    let has_path_params = op["parameters"]
        .as_array()
        .is_some_and(|ps| ps.iter().any(|p| p["in"] == "path"));
    let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
        return;
    };
    for (name, status, _, _) in shared() {
        let needs_body = matches!(
            status,
            StatusCode::PAYLOAD_TOO_LARGE | StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        if needs_body && !takes_body {
            continue;
        }
        responses
            .entry(status.as_str().to_owned())
            .or_insert_with(|| json!({"$ref": format!("#/components/responses/{name}")}));
    }
    if (takes_body || has_path_params) && !responses.contains_key("400") {
        let text = match takes_body {
            true => "Malformed JSON, or a path parameter that is not UTF-8",
            false => "A path parameter that is not UTF-8",
        };
        responses.insert(
            "400".into(),
            json!({"description": text, "content": {PROBLEM: {
                "schema": {"$ref": "#/components/schemas/Problem"}}}}),
        );
    }
    // Every route that takes a bearer token refuses a request without one;
    // routes whose 401 means something narrower (a node token) say so themselves.
    if needs_caller && !responses.contains_key("401") {
        responses.insert(
            "401".into(),
            json!({"description": "Not authenticated", "content": {PROBLEM: {
                "schema": {"$ref": "#/components/schemas/Problem"}}}}),
        );
    }
    let examples = body_examples();
    for response in responses.values_mut() {
        let Some(content) = response
            .get_mut("content")
            .and_then(|c| c.get_mut("application/json"))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        let schema = content["schema"]["$ref"].as_str().unwrap_or_default();
        let name = schema.rsplit('/').next().unwrap_or_default();
        if let Some((_, example)) = examples.iter().find(|(n, _)| n == name) {
            content.entry("example").or_insert_with(|| example.clone());
        }
    }
    for (status, response) in responses.iter_mut() {
        let Some(content) = response
            .get_mut("content")
            .and_then(|c| c.get_mut(PROBLEM))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        if content.contains_key("example") || content.contains_key("examples") {
            continue;
        }
        if let Some(error) = status.parse().ok().and_then(example_for) {
            content.insert("example".into(), problem_json(&error));
        }
    }
}
