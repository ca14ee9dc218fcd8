-- Accounting schema, version 1. The same DDL runs on SQLite and PostgreSQL.
-- Limits and QOS settings live in JSON text columns (attrs/limits) so new
-- limit kinds need no migration; identity and tree columns are real columns.
CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
CREATE TABLE clusters (
    name TEXT PRIMARY KEY
);
CREATE TABLE accounts (
    name         TEXT PRIMARY KEY,
    parent       TEXT NOT NULL,
    description  TEXT NOT NULL,
    organization TEXT NOT NULL
);
CREATE TABLE users (
    name            TEXT PRIMARY KEY,
    default_account TEXT NOT NULL,
    admin_level     INTEGER NOT NULL
);
CREATE TABLE qos (
    id       BIGINT PRIMARY KEY,
    name     TEXT NOT NULL UNIQUE,
    priority BIGINT NOT NULL,
    attrs    TEXT NOT NULL
);
CREATE TABLE assocs (
    id             BIGINT PRIMARY KEY,
    cluster        TEXT NOT NULL,
    account        TEXT NOT NULL,
    username       TEXT NOT NULL,
    partition_name TEXT NOT NULL,
    parent_id      BIGINT NOT NULL,
    shares         BIGINT NOT NULL,
    qos            TEXT,
    default_qos    TEXT NOT NULL,
    priority       BIGINT NOT NULL,
    limits         TEXT NOT NULL,
    UNIQUE (cluster, account, username, partition_name)
);
CREATE INDEX assocs_parent ON assocs (parent_id);
CREATE TABLE tres (
    id   BIGINT PRIMARY KEY,
    type TEXT NOT NULL,
    name TEXT NOT NULL
);
CREATE TABLE usage (
    kind          TEXT NOT NULL,
    id            BIGINT NOT NULL,
    raw_usage     DOUBLE PRECISION NOT NULL,
    grp_used_wall DOUBLE PRECISION NOT NULL,
    last_decay    BIGINT NOT NULL,
    PRIMARY KEY (kind, id)
);
