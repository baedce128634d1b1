-- +goose Up
-- The schema of SQLite's migrations 00001 to 00030, for PostgreSQL: a
-- PostgreSQL database starts here, and later migrations are numbered as the
-- SQLite ones are (one file of each number in each folder). Columns keep
-- SQLite's types where the queries share them: integers for booleans (0/1)
-- and for times (Unix milliseconds), text for JSON.
-- +goose StatementBegin
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;
-- +goose StatementEnd
-- Case-insensitive comparison and order, as SQLite's NOCASE (the same name,
-- so that the queries' COLLATE NOCASE work on both engines).
CREATE COLLATION IF NOT EXISTS nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);

CREATE TABLE server_secrets (
    name       text PRIMARY KEY,
    value      bytea NOT NULL,
    created_at bigint NOT NULL
);

CREATE TABLE plans (
    slug        text PRIMARY KEY,
    name        text NOT NULL,
    features    text NOT NULL,            -- JSON array
    quota_bytes bigint NOT NULL,
    max_seats   bigint NOT NULL
, published bigint NOT NULL DEFAULT 1);

CREATE TABLE organizations (
    id                     text PRIMARY KEY,
    name                   text NOT NULL,
    slug                   text NOT NULL UNIQUE,
    billing_name           text NOT NULL DEFAULT '',
    billing_email          text NOT NULL DEFAULT '',
    logo_url               text NOT NULL DEFAULT '',
    mail_domain            text NOT NULL DEFAULT '',
    parent_organization_id text REFERENCES organizations(id),
    reseller_depth         bigint NOT NULL DEFAULT 0,
    status                 text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    created_at             bigint NOT NULL,
    updated_at             bigint NOT NULL
, restrict_invitations bigint NOT NULL DEFAULT 0 CHECK (restrict_invitations IN (0, 1)));

CREATE INDEX organizations_parent ON organizations(parent_organization_id, id);

CREATE INDEX organizations_parent_name ON organizations(parent_organization_id, name COLLATE nocase);

CREATE TABLE subscriptions (
    organization_id text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    plan_slug       text NOT NULL REFERENCES plans(slug),
    seats           bigint NOT NULL,
    status          text NOT NULL DEFAULT 'active',
    updated_at      bigint NOT NULL
);

CREATE TABLE users (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    email           text NOT NULL,
    email_key       text NOT NULL UNIQUE,  -- lower(email)
    first_name      text NOT NULL DEFAULT '',
    last_name       text NOT NULL DEFAULT '',
    role_slug       text NOT NULL CHECK (role_slug IN ('admin', 'member')),
    status          text NOT NULL CHECK (status IN ('invited', 'active', 'suspended')),
    password_hash   text NOT NULL DEFAULT '',
    created_at      bigint NOT NULL,
    updated_at      bigint NOT NULL
, last_sign_in_at bigint, credentials_not_before bigint NOT NULL DEFAULT 0);

CREATE INDEX users_org ON users(organization_id, id);

CREATE TABLE personal_access_tokens (
    id              text PRIMARY KEY,
    user_id         text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name            text NOT NULL DEFAULT '',
    token_hash      bytea NOT NULL UNIQUE,
    scopes          text NOT NULL,          -- space separated
    expires_at      bigint,
    created_at      bigint NOT NULL
, last_used_at bigint);

CREATE INDEX personal_access_tokens_user ON personal_access_tokens(user_id);

CREATE TABLE app_passwords (
    id          text PRIMARY KEY,
    user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    label       text NOT NULL DEFAULT '',
    secret_hash bytea NOT NULL,
    created_at  bigint NOT NULL
, last_used_at bigint);

CREATE UNIQUE INDEX app_passwords_user_hash ON app_passwords(user_id, secret_hash);

CREATE TABLE service_principals (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name            text NOT NULL,
    scopes          text NOT NULL,
    user_id         text REFERENCES users(id) ON DELETE SET NULL,
    created_at      bigint NOT NULL
);

CREATE INDEX service_principals_org ON service_principals(organization_id, id);

CREATE TABLE service_principal_tokens (
    id                   text PRIMARY KEY,
    service_principal_id text NOT NULL REFERENCES service_principals(id) ON DELETE CASCADE,
    name                 text NOT NULL DEFAULT '',
    token_hash           bytea NOT NULL UNIQUE,
    expires_at           bigint,
    created_at           bigint NOT NULL
);

CREATE INDEX service_principal_tokens_sp ON service_principal_tokens(service_principal_id, id);

CREATE TABLE audit_log (
    id              text PRIMARY KEY,
    organization_id text NOT NULL,
    module          text NOT NULL,
    action          text NOT NULL,
    actor_id        text NOT NULL DEFAULT '',
    target_type     text NOT NULL DEFAULT '',
    target_id       text NOT NULL DEFAULT '',
    changed_fields  text NOT NULL DEFAULT '[]',
    created_at      bigint NOT NULL
);

CREATE INDEX audit_log_org ON audit_log(organization_id, id);

CREATE TABLE idempotency_keys (
    organization_id text NOT NULL,
    key             text NOT NULL,
    request_hash    bytea NOT NULL,
    state           text NOT NULL CHECK (state IN ('in_flight', 'done')),
    status          bigint NOT NULL DEFAULT 0,
    headers         text NOT NULL DEFAULT '{}',
    body            bytea,
    lease_until     bigint NOT NULL,
    expires_at      bigint NOT NULL, principal text NOT NULL DEFAULT '',
    PRIMARY KEY (organization_id, key)
);

CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);

CREATE TABLE teams (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name            text NOT NULL,
    created_at      bigint NOT NULL,
    updated_at      bigint NOT NULL
);

CREATE UNIQUE INDEX teams_org_name ON teams(organization_id, name COLLATE nocase);

CREATE TABLE team_members (
    team_id    text NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at bigint NOT NULL,
    PRIMARY KEY (team_id, user_id)
);

CREATE INDEX team_members_user ON team_members(user_id);

CREATE TABLE user_tokens (
    id         text PRIMARY KEY,
    user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind       text NOT NULL CHECK (kind IN ('invite', 'reset')),
    token_hash bytea NOT NULL UNIQUE,
    expires_at bigint NOT NULL,
    used_at    bigint,
    created_at bigint NOT NULL
);

CREATE INDEX user_tokens_user ON user_tokens(user_id, kind);

CREATE TABLE mail_outbox (
    id              text PRIMARY KEY,
    organization_id text NOT NULL DEFAULT '',
    to_addr         text NOT NULL,
    subject         text NOT NULL,
    body            text NOT NULL,
    status          text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed', 'logged')),
    attempts        bigint NOT NULL DEFAULT 0,
    next_attempt_at bigint NOT NULL,
    last_error      text NOT NULL DEFAULT '',
    created_at      bigint NOT NULL
);

CREATE INDEX mail_outbox_due ON mail_outbox(status, next_attempt_at);

-- The partners' search of organisation names (SQLite: organizations_fts,
-- trigram): a name containing each word, any case.
CREATE INDEX organizations_name_trgm ON organizations USING gin (name gin_trgm_ops);

CREATE INDEX organizations_parent_status ON organizations(parent_organization_id, status, id);

CREATE TABLE webhook_subscriptions (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    url             text NOT NULL,
    description     text NOT NULL DEFAULT '',
    events          text NOT NULL DEFAULT '[]',   -- JSON array; empty = every catalog event
    is_active       bigint NOT NULL DEFAULT 1,
    signing_secret  text NOT NULL,
    created_at      bigint NOT NULL,
    updated_at      bigint NOT NULL
);

CREATE INDEX webhook_subscriptions_org ON webhook_subscriptions(organization_id, id);

CREATE TABLE webhook_deliveries (
    id              text PRIMARY KEY,
    subscription_id text NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
    event_id        text NOT NULL,
    event_type      text NOT NULL,
    body            bytea NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'retrying', 'successful', 'failed', 'skipped')),
    attempts        bigint NOT NULL DEFAULT 0,   -- over the delivery's life
    cycle_attempts  bigint NOT NULL DEFAULT 0,   -- since creation or the last replay
    next_attempt_at bigint,
    lease_id        text,
    lease_until     bigint,
    response_status bigint,
    error           text NOT NULL DEFAULT '',
    duration_ms     bigint,
    created_at      bigint NOT NULL,
    updated_at      bigint NOT NULL,
    UNIQUE (event_id, subscription_id)
);

CREATE INDEX webhook_deliveries_sub ON webhook_deliveries(subscription_id, id);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries(subscription_id, next_attempt_at) WHERE status IN ('pending', 'retrying');

CREATE INDEX webhook_deliveries_created ON webhook_deliveries(created_at);

CREATE TABLE webhook_attempts (
    delivery_id      text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    number           bigint NOT NULL,
    started_at       bigint NOT NULL,
    request_headers  text NOT NULL,
    response_status  bigint,
    response_headers text NOT NULL DEFAULT '{}',
    response_body    text NOT NULL DEFAULT '',
    duration_ms      bigint NOT NULL,
    error            text NOT NULL DEFAULT '',
    outcome          text NOT NULL,
    PRIMARY KEY (delivery_id, number)
);

CREATE TABLE address_books (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    owner_id        text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name            text NOT NULL,
    description     text NOT NULL DEFAULT '',
    is_default      bigint NOT NULL DEFAULT 0,
    sync_seq        bigint NOT NULL DEFAULT 0,
    created_at      bigint NOT NULL,
    updated_at      bigint NOT NULL
, pruned_seq bigint NOT NULL DEFAULT 0);

CREATE INDEX address_books_owner ON address_books(organization_id, owner_id, id);

CREATE UNIQUE INDEX address_books_one_default ON address_books(owner_id) WHERE is_default = 1;

CREATE TABLE contacts (
    n               bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    id              text NOT NULL UNIQUE,
    book_id         text NOT NULL REFERENCES address_books(id) ON DELETE CASCADE,
    organization_id text NOT NULL,
    owner_id        text NOT NULL,
    href            text NOT NULL,          -- resource name in the book (CardDAV)
    uid             text NOT NULL,
    display_name    text NOT NULL,
    first_name      text NOT NULL DEFAULT '',
    last_name       text NOT NULL DEFAULT '',
    email           text NOT NULL DEFAULT '',  -- primary
    phone           text NOT NULL DEFAULT '',  -- primary
    organization    text NOT NULL DEFAULT '',
    sort_key        text NOT NULL,
    summary         text NOT NULL,          -- the list form (ContactSummary JSON)
    is_favorite     bigint NOT NULL DEFAULT 0,
    vcard           text NOT NULL,
    etag            text NOT NULL,
    seq             bigint NOT NULL,
    created_at      bigint NOT NULL,
    updated_at      bigint NOT NULL
);

CREATE UNIQUE INDEX contacts_book_href ON contacts(book_id, href);

CREATE INDEX contacts_book_list ON contacts(book_id, sort_key, id, owner_id, organization_id, summary);

CREATE INDEX contacts_book_seq ON contacts(book_id, seq);

CREATE INDEX contacts_owner ON contacts(owner_id, organization_id);

CREATE TABLE contact_tombstones (
    book_id    text NOT NULL REFERENCES address_books(id) ON DELETE CASCADE,
    href       text NOT NULL,
    seq        bigint NOT NULL,
    deleted_at bigint NOT NULL,
    PRIMARY KEY (book_id, href)
);

CREATE INDEX contact_tombstones_seq ON contact_tombstones(book_id, seq);

-- The contacts' search (SQLite: contacts_fts, FTS5): each contact's words,
-- accents removed, weighted names, e-mail addresses, phones, organisation.
CREATE TABLE contacts_fts (
    rowid        bigint PRIMARY KEY REFERENCES contacts(n) ON DELETE CASCADE,
    doc          tsvector NOT NULL
);
CREATE INDEX contacts_fts_doc ON contacts_fts USING gin (doc);

CREATE TABLE calendars (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    user_id         text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name            text NOT NULL,
    description     text NOT NULL DEFAULT '',
    color           text NOT NULL DEFAULT '',
    timezone        text NOT NULL DEFAULT 'UTC',
    is_default      bigint NOT NULL DEFAULT 0,
    sync_seq        bigint NOT NULL DEFAULT 0,
    created_at      bigint NOT NULL,
    updated_at      bigint NOT NULL
, pruned_seq bigint NOT NULL DEFAULT 0, components text NOT NULL DEFAULT 'VEVENT VTODO');

CREATE INDEX calendars_user ON calendars(organization_id, user_id, id);

CREATE UNIQUE INDEX calendars_user_default ON calendars(user_id) WHERE is_default = 1;

CREATE TABLE calendar_objects (
    id              text PRIMARY KEY,
    calendar_id     text NOT NULL REFERENCES calendars(id) ON DELETE CASCADE,
    organization_id text NOT NULL,
    user_id         text NOT NULL,
    uid             text NOT NULL,
    name            text NOT NULL,
    ics             text NOT NULL,
    etag            text NOT NULL,
    seq             bigint NOT NULL,
    tzids           text NOT NULL DEFAULT '',    -- space separated TZIDs the object uses
    created_at      bigint NOT NULL,
    updated_at      bigint NOT NULL
);

CREATE UNIQUE INDEX calendar_objects_uid ON calendar_objects(calendar_id, uid);

CREATE UNIQUE INDEX calendar_objects_name ON calendar_objects(calendar_id, name);

CREATE INDEX calendar_objects_seq ON calendar_objects(calendar_id, seq);

CREATE TABLE calendar_components (
    object_id      text NOT NULL REFERENCES calendar_objects(id) ON DELETE CASCADE,
    calendar_id    text NOT NULL,
    user_id        text NOT NULL,
    uid            text NOT NULL,
    recurrence_id  bigint,                     -- Unix ms of the original start of an override
    has_overrides  bigint NOT NULL DEFAULT 0,  -- on a master: the object holds overrides
    title          text NOT NULL DEFAULT '',
    location       text NOT NULL DEFAULT '',
    start_ms       bigint NOT NULL,
    end_ms         bigint NOT NULL,
    all_day        bigint NOT NULL DEFAULT 0,
    timezone       text NOT NULL DEFAULT '',
    rrule          text NOT NULL DEFAULT '',
    rdates         text NOT NULL DEFAULT '',    -- space separated Unix ms
    exdates        text NOT NULL DEFAULT '',    -- space separated Unix ms
    busy           bigint NOT NULL DEFAULT 1,  -- counts for free/busy (opaque, not cancelled)
    cancelled      bigint NOT NULL DEFAULT 0,
    range_start_ms bigint NOT NULL,
    range_end_ms   bigint
, long_span bigint
    GENERATED ALWAYS AS (CASE WHEN range_end_ms IS NULL OR range_end_ms - range_start_ms > 604800000 THEN 1 ELSE 0 END) STORED);

CREATE INDEX calendar_components_object ON calendar_components(object_id);

CREATE TABLE calendar_tombstones (
    calendar_id text NOT NULL REFERENCES calendars(id) ON DELETE CASCADE,
    name        text NOT NULL,
    uid         text NOT NULL,
    seq         bigint NOT NULL,
    deleted_at  bigint NOT NULL,
    PRIMARY KEY (calendar_id, name)
);

CREATE INDEX calendar_tombstones_seq ON calendar_tombstones(calendar_id, seq);

CREATE TABLE drive_files (
    id               text PRIMARY KEY,
    organization_id  text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    owner_id         text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    parent_id        text REFERENCES drive_files(id),
    name             text NOT NULL,
    name_key         text NOT NULL,
    is_folder        bigint NOT NULL,
    mime_type        text NOT NULL,
    mime_group       text NOT NULL,
    size_bytes       bigint NOT NULL DEFAULT 0,
    stored_bytes     bigint NOT NULL DEFAULT 0,
    content_hash     text NOT NULL DEFAULT '',
    version          bigint NOT NULL DEFAULT 0,
    status           text NOT NULL,
    is_favorite      bigint NOT NULL DEFAULT 0,
    description      text NOT NULL DEFAULT '',
    tags             text NOT NULL DEFAULT '[]',
    custom           text NOT NULL DEFAULT '{}',
    trashed_at       bigint,
    trash_root       text,
    trash_parent_id  text,
    comments_channel text,
    seq              bigint NOT NULL,
    last_access_at   bigint,
    created_at       bigint NOT NULL,
    updated_at       bigint NOT NULL
, modified_at bigint);

CREATE UNIQUE INDEX drive_files_live_name ON drive_files(owner_id, coalesce(parent_id, ''), name_key)
    WHERE trashed_at IS NULL AND status <> 'pending';

CREATE INDEX drive_files_owner_seq ON drive_files(owner_id, seq);

CREATE INDEX drive_files_trash ON drive_files(owner_id, trash_root) WHERE trashed_at IS NOT NULL;

CREATE INDEX drive_files_pending ON drive_files(status, created_at) WHERE status = 'pending';

CREATE INDEX drive_files_size ON drive_files(organization_id, owner_id, size_bytes) WHERE is_folder = 0 AND status <> 'pending';

CREATE TABLE drive_versions (
    id           text PRIMARY KEY,
    file_id      text NOT NULL REFERENCES drive_files(id) ON DELETE CASCADE,
    version      bigint NOT NULL,
    size_bytes   bigint NOT NULL,
    content_hash text NOT NULL,
    mime_type    text NOT NULL,
    created_by   text NOT NULL,
    created_at   bigint NOT NULL,
    UNIQUE (file_id, version)
);

CREATE INDEX drive_versions_hash ON drive_versions(content_hash);

CREATE TABLE drive_uploads (
    id           text PRIMARY KEY,
    file_id      text NOT NULL,
    organization_id text NOT NULL,
    owner_id     text NOT NULL,
    created_by   text NOT NULL,
    name         text NOT NULL,
    mime_type    text NOT NULL,
    size_bytes   bigint NOT NULL,
    content_hash text NOT NULL DEFAULT '',
    received_at  bigint,
    created_at   bigint NOT NULL,
    expires_at   bigint NOT NULL
);

CREATE INDEX drive_uploads_file ON drive_uploads(file_id, created_at);

CREATE INDEX drive_uploads_expiry ON drive_uploads(expires_at);

CREATE INDEX drive_uploads_hash ON drive_uploads(content_hash) WHERE content_hash <> '';

CREATE TABLE drive_usage (
    organization_id text NOT NULL,
    owner_id        text NOT NULL,
    mime_group      text NOT NULL,
    bytes           bigint NOT NULL DEFAULT 0,
    file_count      bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (organization_id, owner_id, mime_group)
);

CREATE TABLE drive_seq (
    owner_id   text PRIMARY KEY,
    seq        bigint NOT NULL DEFAULT 0,
    pruned_seq bigint NOT NULL DEFAULT 0
);

CREATE TABLE drive_tombstones (
    owner_id   text NOT NULL,
    file_id    text NOT NULL,
    name       text NOT NULL,
    parent_id  text,
    seq        bigint NOT NULL,
    deleted_at bigint NOT NULL,
    PRIMARY KEY (owner_id, seq)
);

CREATE TABLE drive_devices (
    owner_id     text NOT NULL,
    device_id    text NOT NULL,
    cursor       text NOT NULL DEFAULT '',
    cursor_seq   bigint NOT NULL DEFAULT 0,
    committed_at bigint,
    last_seen_at bigint NOT NULL,
    PRIMARY KEY (owner_id, device_id)
);

CREATE TABLE drive_shares (
    id              text PRIMARY KEY,
    organization_id text NOT NULL,
    file_id         text NOT NULL REFERENCES drive_files(id) ON DELETE CASCADE,
    owner_id        text NOT NULL,
    created_by      text NOT NULL,
    user_id         text REFERENCES users(id) ON DELETE CASCADE,
    token           text UNIQUE,
    permission      text NOT NULL,
    expires_at      bigint,
    created_at      bigint NOT NULL
, team_id text REFERENCES teams(id) ON DELETE CASCADE, organization_wide bigint NOT NULL DEFAULT 0, is_folder bigint NOT NULL DEFAULT 0);

CREATE INDEX drive_shares_file ON drive_shares(file_id);

CREATE INDEX drive_shares_user ON drive_shares(user_id) WHERE user_id IS NOT NULL;

CREATE TABLE drive_orphans (
    content_hash text PRIMARY KEY,
    since        bigint NOT NULL
);

CREATE TABLE "drive_locks" (
    token      text PRIMARY KEY,
    file_id    text NOT NULL REFERENCES drive_files(id) ON DELETE CASCADE,
    owner_id   text NOT NULL,
    kind       text NOT NULL,
    shared     bigint NOT NULL DEFAULT 0,
    deep       bigint NOT NULL DEFAULT 0,
    owner_info text NOT NULL DEFAULT '',
    expires_at bigint NOT NULL,
    created_at bigint NOT NULL
);

CREATE INDEX drive_locks_file ON drive_locks(file_id, expires_at);

CREATE TABLE drive_props (
    file_id text NOT NULL REFERENCES drive_files(id) ON DELETE CASCADE,
    ns      text NOT NULL,
    name    text NOT NULL,
    value   text NOT NULL,
    PRIMARY KEY (file_id, ns, name)
);

CREATE UNIQUE INDEX drive_shares_file_user ON drive_shares(file_id, user_id) WHERE user_id IS NOT NULL;

CREATE INDEX drive_files_browse_name ON drive_files(owner_id, parent_id, is_folder DESC, name_key, id)
    WHERE trashed_at IS NULL AND status <> 'pending';

CREATE INDEX drive_files_children ON drive_files(parent_id);

CREATE TABLE drive_tus_uploads (
    id              text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    created_by      text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    parent_id       text NOT NULL DEFAULT '',
    name            text NOT NULL,
    mime_type       text NOT NULL,
    length          bigint NOT NULL DEFAULT 0,
    length_deferred bigint NOT NULL DEFAULT 0,
    upload_offset   bigint NOT NULL DEFAULT 0,
    hash_state      bytea,
    status          text NOT NULL,
    content_hash    text NOT NULL DEFAULT '',
    file_id         text NOT NULL DEFAULT '',
    created_at      bigint NOT NULL,
    updated_at      bigint NOT NULL,
    expires_at      bigint NOT NULL
);

CREATE INDEX drive_tus_uploads_expiry ON drive_tus_uploads(expires_at);

CREATE INDEX drive_tus_uploads_hash ON drive_tus_uploads(content_hash) WHERE content_hash <> '';

CREATE TABLE drive_previews (
    source_hash  text    NOT NULL,
    kind         text    NOT NULL,
    size         bigint NOT NULL,
    derived_hash text    NOT NULL,
    size_bytes   bigint NOT NULL,
    created_at   bigint NOT NULL,
    last_used_at bigint NOT NULL,
    PRIMARY KEY (source_hash, kind, size)
);

CREATE INDEX drive_previews_lru ON drive_previews(last_used_at);

CREATE INDEX drive_previews_derived ON drive_previews(derived_hash);

CREATE TABLE drive_preview_tokens (
    token_hash text PRIMARY KEY,
    file_id    text    NOT NULL,
    org_id     text    NOT NULL,
    user_id    text    NOT NULL,
    expires_at bigint NOT NULL,
    used_at    bigint,
    created_at bigint NOT NULL
);

CREATE INDEX drive_preview_tokens_expiry ON drive_preview_tokens(expires_at);

CREATE TABLE drive_archive (
    content_hash text PRIMARY KEY,
    size_bytes   bigint NOT NULL,
    archived_at  bigint NOT NULL
);

CREATE INDEX drive_files_cold ON drive_files(content_hash) WHERE status IN ('archived', 'restoring');

CREATE INDEX calendar_components_range ON calendar_components(calendar_id, long_span, range_start_ms, range_end_ms);

CREATE INDEX calendar_components_user_range ON calendar_components(user_id, long_span, range_start_ms, range_end_ms);

CREATE INDEX contact_tombstones_age ON contact_tombstones(deleted_at);

CREATE INDEX calendar_tombstones_age ON calendar_tombstones(deleted_at);

CREATE INDEX audit_log_age ON audit_log(created_at);

CREATE TABLE drive_digests (
    content_hash text PRIMARY KEY,
    sha1         text NOT NULL,
    md5          text NOT NULL
);

CREATE TABLE web_sessions (
    id              text PRIMARY KEY,
    user_id         text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    token_hash      bytea NOT NULL UNIQUE,
    user_agent      text NOT NULL DEFAULT '',
    address         text NOT NULL DEFAULT '',
    created_at      bigint NOT NULL,
    last_seen_at    bigint NOT NULL,
    expires_at      bigint NOT NULL
, authenticated_at bigint NOT NULL DEFAULT 0);

CREATE INDEX web_sessions_user ON web_sessions(user_id, id);

CREATE INDEX web_sessions_org ON web_sessions(organization_id);

CREATE INDEX web_sessions_seen ON web_sessions(last_seen_at);

CREATE TABLE pending_fixups (name text PRIMARY KEY);

CREATE TABLE user_two_factor (
    user_id    text PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    secret     text NOT NULL,
    enabled_at bigint,
    last_step  bigint NOT NULL DEFAULT 0,
    created_at bigint NOT NULL
);

CREATE TABLE user_recovery_codes (
    user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_hash  bytea NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (user_id, code_hash)
);

CREATE TABLE sign_in_challenges (
    token_hash bytea PRIMARY KEY,
    user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    attempts   bigint NOT NULL DEFAULT 0,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL
);

CREATE INDEX sign_in_challenges_user ON sign_in_challenges(user_id);

CREATE INDEX sign_in_challenges_expires ON sign_in_challenges(expires_at);

CREATE INDEX drive_files_favorites ON drive_files(owner_id, is_folder DESC, name_key, id)
    WHERE is_favorite = 1 AND trashed_at IS NULL AND status <> 'pending';

CREATE TABLE "outbox" (
    seq             bigserial PRIMARY KEY,
    id              text NOT NULL,
    type            text NOT NULL,
    organization_id text NOT NULL,
    data            text NOT NULL,
    created_at      bigint NOT NULL,
    -- The writing transaction: readers read only what every transaction
    -- older than the oldest one in flight wrote (pg_snapshot_xmin), so that
    -- no reader passes an event whose transaction commits later.
    xid             xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX outbox_xid ON outbox(xid);

CREATE TABLE drive_org_usage (
    organization_id text PRIMARY KEY,
    bytes           bigint NOT NULL DEFAULT 0,
    file_count      bigint NOT NULL DEFAULT 0
);

-- drive_org_usage follows drive_usage (the organisation's totals, read by
-- the quota check).
-- +goose StatementBegin
CREATE FUNCTION drive_usage_org() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE drive_org_usage SET bytes = drive_org_usage.bytes - OLD.bytes, file_count = drive_org_usage.file_count - OLD.file_count
            WHERE organization_id = OLD.organization_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO drive_org_usage (organization_id, bytes, file_count) VALUES (NEW.organization_id, NEW.bytes, NEW.file_count)
            ON CONFLICT (organization_id) DO UPDATE SET bytes = drive_org_usage.bytes + excluded.bytes,
            file_count = drive_org_usage.file_count + excluded.file_count;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER drive_usage_org AFTER INSERT OR UPDATE OR DELETE ON drive_usage FOR EACH ROW EXECUTE FUNCTION drive_usage_org();

CREATE TABLE "drive_small_blobs" (
    hash       text    NOT NULL PRIMARY KEY,
    created_at bigint NOT NULL,
    sha1       text,
    md5        text,
    data       bytea    NOT NULL
);

-- A share knows whether its item is a folder (the grants' covering indexes).
-- +goose StatementBegin
CREATE FUNCTION drive_shares_is_folder() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.is_folder := coalesce((SELECT f.is_folder FROM drive_files f WHERE f.id = NEW.file_id), 0);
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER drive_shares_is_folder BEFORE INSERT ON drive_shares FOR EACH ROW EXECUTE FUNCTION drive_shares_is_folder();

CREATE UNIQUE INDEX drive_shares_file_team ON drive_shares(file_id, team_id) WHERE team_id IS NOT NULL;

CREATE UNIQUE INDEX drive_shares_file_org ON drive_shares(file_id) WHERE organization_wide = 1;

CREATE INDEX drive_shares_team ON drive_shares(team_id, file_id, expires_at, permission, created_at, is_folder, id) WHERE team_id IS NOT NULL;

CREATE INDEX drive_shares_org ON drive_shares(organization_id, file_id, expires_at, permission, created_at, is_folder, id, owner_id) WHERE organization_wide = 1;

-- What each user is granted, by a share to them, to a team of theirs or to
-- their whole organisation (since: when the grant began).
CREATE VIEW drive_share_grants AS
    SELECT s.id AS share_id, s.file_id, s.user_id, s.permission, s.expires_at, s.created_at AS since, s.is_folder
    FROM drive_shares s WHERE s.user_id IS NOT NULL
    UNION ALL
    SELECT s.id, s.file_id, m.user_id, s.permission, s.expires_at, greatest(s.created_at, m.created_at), s.is_folder
    FROM team_members m JOIN drive_shares s ON s.team_id = m.team_id
    UNION ALL
    SELECT s.id, s.file_id, u.id, s.permission, s.expires_at, greatest(s.created_at, u.created_at), s.is_folder
    FROM users u JOIN drive_shares s ON s.organization_id = u.organization_id AND s.organization_wide = 1
    WHERE u.id <> s.owner_id;

-- The drive's search index (PostgreSQL keeps it, where SQLite's server keeps
-- a Bleve index under the data directory): one row a live item, its words
-- weighted name (A), tags (B), description (C), content (D), accents removed.
CREATE TABLE search_docs (
    id           text PRIMARY KEY,
    org_id       text NOT NULL,
    owner_id     text NOT NULL,
    owner_name   text NOT NULL DEFAULT '',
    folders      text[] NOT NULL DEFAULT '{}',
    name         text NOT NULL,
    mime_type    text NOT NULL DEFAULT '',
    mime_group   text NOT NULL DEFAULT '',
    description  text NOT NULL DEFAULT '',
    tags         text NOT NULL DEFAULT '',
    is_folder    bigint NOT NULL DEFAULT 0,
    size_bytes   bigint NOT NULL DEFAULT 0,
    content_hash text NOT NULL DEFAULT '',
    created_at   bigint NOT NULL,
    updated_at   bigint NOT NULL,
    doc          tsvector NOT NULL
);
CREATE INDEX search_docs_doc ON search_docs USING gin (doc);
CREATE INDEX search_docs_folders ON search_docs USING gin (folders);
CREATE INDEX search_docs_owner ON search_docs (org_id, owner_id);
CREATE INDEX search_docs_hash ON search_docs (content_hash) WHERE content_hash <> '';
-- The extracted text of each content, once (a content shared by many files
-- is extracted and kept once).
CREATE TABLE search_texts (
    content_hash text PRIMARY KEY,
    text         text NOT NULL
);
-- The index's state: whether it is built, and the last outbox event applied.
CREATE TABLE search_state (
    id     bigint PRIMARY KEY CHECK (id = 1),
    built  bigint NOT NULL DEFAULT 0,
    cursor bigint NOT NULL DEFAULT 0
);

-- +goose Down
-- The baseline is not taken down: drop the database instead.
SELECT 1;
