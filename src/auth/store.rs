//! Queries of the auth module.

use super::email::Email;
use super::{password, tokens, Caller, Credential, Role};
use crate::billing::ledger;
use crate::db::{dispatch, execute_tx, Db};
use anyhow::Context;
use chrono::{DateTime, Utc};
use sqlx::Row;
use uuid::Uuid;

/// A user as stored.
#[derive(Debug, Clone)]
pub struct UserRow {
    pub id: Uuid,
    pub email: String,
    pub name: String,
    pub role: Role,
    pub password_hash: String,
    pub created_at: DateTime<Utc>,
}

fn user_from_row<R>(row: &R) -> Result<UserRow, sqlx::Error>
where
    R: Row,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    Uuid: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    DateTime<Utc>: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let role: String = row.try_get("role")?;
    Ok(UserRow {
        id: row.try_get("id")?,
        email: row.try_get("email")?,
        name: row.try_get("name")?,
        role: Role::parse(&role).ok_or_else(|| sqlx::Error::Decode("unknown role".into()))?,
        password_hash: row.try_get("password_hash")?,
        created_at: row.try_get("created_at")?,
    })
}

const USER_COLUMNS: &str = "id, email, name, role, password_hash, created_at";

/// Creates a user and its ledger accounts. `Ok(None)` when the email is taken.
pub async fn create_user(
    db: &Db,
    email: &str,
    name: &str,
    role: Role,
    password_hash: &str,
    currency: &str,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<UserRow>> {
    let id = Uuid::now_v7();
    let mut tx = db.begin().await?;
    let inserted = execute_tx!(
        tx,
        "INSERT INTO users (id, email, name, role, password_hash, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        id,
        email,
        name,
        role.as_str(),
        password_hash,
        now,
    );
    match inserted {
        Ok(_) => {}
        Err(e) if crate::db::is_unique_violation(&e) => return Ok(None),
        Err(e) => return Err(e).context("failed to insert a user"),
    }
    ledger::open_user_accounts(&mut tx, id, currency, now).await?;
    tx.commit().await?;
    Ok(Some(UserRow {
        id,
        email: email.to_owned(),
        name: name.to_owned(),
        role,
        password_hash: password_hash.to_owned(),
        created_at: now,
    }))
}

pub async fn user_by_email(db: &Db, email: &str) -> anyhow::Result<Option<UserRow>> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE email = $1");
    dispatch!(db, pool => {
        let row = sqlx::query(&sql).bind(email).fetch_optional(pool).await?;
        row.map(|r| user_from_row(&r)).transpose().context("failed to read a user")
    })
}

pub async fn user_by_id(db: &Db, id: Uuid) -> anyhow::Result<Option<UserRow>> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1");
    dispatch!(db, pool => {
        let row = sqlx::query(&sql).bind(id).fetch_optional(pool).await?;
        row.map(|r| user_from_row(&r)).transpose().context("failed to read a user")
    })
}

/// The current role of account `id`; `None` once it is gone.
pub async fn role_of(db: &Db, id: Uuid) -> anyhow::Result<Option<Role>> {
    let role: Option<String> = dispatch!(db, pool => {
        sqlx::query_scalar("SELECT role FROM users WHERE id = $1")
            .bind(id)
            .fetch_optional(pool)
            .await
    })
    .context("failed to read an account's role")?;
    role.map(|r| Role::parse(&r).context("unknown role in users"))
        .transpose()
}

/// Stores a key for `user`, bound to the role it has now: should the role
/// change, the key stops working rather than carry the new role.
pub async fn insert_api_key(
    db: &Db,
    user: Uuid,
    role: Role,
    name: &str,
    prefix: &str,
    key_hash: &str,
    now: DateTime<Utc>,
) -> anyhow::Result<Uuid> {
    let id = Uuid::now_v7();
    dispatch!(db, pool => {
        sqlx::query(
            "INSERT INTO api_keys (id, user_id, role, name, prefix, key_hash, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id)
        .bind(user)
        .bind(role.as_str())
        .bind(name)
        .bind(prefix)
        .bind(key_hash)
        .bind(now)
        .execute(pool)
        .await
        .map(|r| r.rows_affected())
    })
    .context("failed to insert an API key")?;
    Ok(id)
}

/// The keys of `user`: (id, name, prefix, created_at).
pub async fn api_keys_of(
    db: &Db,
    user: Uuid,
) -> anyhow::Result<Vec<(Uuid, String, String, DateTime<Utc>)>> {
    dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT id, name, prefix, created_at FROM api_keys WHERE user_id = $1 ORDER BY created_at",
        )
        .bind(user)
        .fetch_all(pool)
        .await
    })
    .context("failed to list API keys")
}

/// Deletes `user`'s key `id`; `false` when the user has no such key.
pub async fn delete_api_key(db: &Db, user: Uuid, id: Uuid) -> anyhow::Result<bool> {
    let deleted = dispatch!(db, pool => {
        sqlx::query("DELETE FROM api_keys WHERE id = $1 AND user_id = $2")
            .bind(id)
            .bind(user)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
    })
    .context("failed to delete an API key")?;
    Ok(deleted > 0)
}

/// The caller of a key, while its account exists with the role the key was made for.
pub async fn caller_by_api_key(db: &Db, key_hash: &str) -> anyhow::Result<Option<Caller>> {
    let row: Option<(Uuid, String)> = dispatch!(db, pool => {
        sqlx::query_as(
            "SELECT u.id, u.role FROM api_keys k JOIN users u ON u.id = k.user_id \
             WHERE k.key_hash = $1 AND k.role = u.role",
        )
        .bind(key_hash)
        .fetch_optional(pool)
        .await
    })
    .context("failed to look up an API key")?;
    Ok(row.and_then(|(id, role)| {
        Some(Caller {
            id,
            role: Role::parse(&role)?,
            via: Credential::ApiKey,
            expires_at: None,
        })
    }))
}

/// The HS256 secret stored in the database, created on first start.
pub async fn load_or_create_jwt_secret(db: &Db) -> anyhow::Result<String> {
    let candidate = tokens::random_hex(32);
    dispatch!(db, pool => {
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES ('jwt_secret', $1) ON CONFLICT (key) DO NOTHING",
        )
        .bind(&candidate)
        .execute(pool)
        .await?;
        sqlx::query_scalar::<_, String>("SELECT value FROM settings WHERE key = 'jwt_secret'")
            .fetch_one(pool)
            .await
    })
    .context("failed to load the JWT secret")
}

/// Creates the admin, or resets the password of the admin it created before;
/// safe to run at every start. An email that belongs to a buyer or provider
/// is refused: promoting it would hand admin rights to whoever registered it,
/// and to the keys they made.
pub async fn bootstrap_admin(
    db: &Db,
    email: &str,
    password_plain: &str,
    currency: &str,
) -> anyhow::Result<Uuid> {
    let email = Email::parse(email)
        .map_err(|e| anyhow::anyhow!("the admin email `{email}` {}", e.message))?;
    let email = email.as_str();
    let hash = password::hash(password_plain.to_owned()).await?;
    if let Some(existing) = user_by_email(db, email).await? {
        if existing.role != Role::Admin {
            anyhow::bail!(
                "the admin email {email} belongs to an existing {} account, which is not \
                 made an admin; choose an email no account uses",
                existing.role
            );
        }
        dispatch!(db, pool => {
            sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
                .bind(&hash)
                .bind(existing.id)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .context("failed to update the admin")?;
        return Ok(existing.id);
    }
    let user = create_user(
        db,
        email,
        "Administrator",
        Role::Admin,
        &hash,
        currency,
        Utc::now(),
    )
    .await?
    .context("the admin email was taken concurrently")?;
    Ok(user.id)
}
