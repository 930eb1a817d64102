//! What a team's hub holds, for `status` (`/api/status` on `serve --postgres`): its schema's
//! version, each host with its sessions, entries and photos and its first and last push, and its
//! photos' blobs.

use scrollback_core::error::{Error, Result};
use scrollback_read::status::{HostStatus, HubStatus};

use crate::Pg;
use crate::store::HubStore;

impl HubStore {
    /// What the hub holds, for `status`: its schema, hosts and their last pushes, and its blobs.
    pub(crate) fn status(&self) -> Result<HubStatus> {
        let version: String = self
            .query_opt("SELECT value FROM hub_meta WHERE key = 'schema_version'", &[])?
            .map(|r| r.try_get(0))
            .transpose()
            .pg()?
            .unwrap_or_default();
        let hosts = self.query(
            r#"SELECT h.name,
                      to_char(h.first_push_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                      to_char(h.last_push_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                      count(s.id), coalesce(sum(s.entries), 0)::bigint, coalesce(sum(s.images), 0)::bigint
               FROM hosts h LEFT JOIN sessions s ON s.host = h.name
               GROUP BY h.name, h.first_push_at, h.last_push_at ORDER BY h.name COLLATE "C""#,
            &[],
        )?;
        let blobs = self
            .query_opt("SELECT count(*), coalesce(sum(length), 0)::bigint FROM blobs", &[])?
            .ok_or_else(|| Error::Internal("an aggregate without its row".into()))?;
        Ok(HubStatus {
            schema_version: version.parse().unwrap_or(0),
            hosts: hosts
                .iter()
                .map(|r| {
                    Ok(HostStatus {
                        name: r.try_get(0).pg()?,
                        first_push_at: r.try_get(1).pg()?,
                        last_push_at: r.try_get(2).pg()?,
                        sessions: r.try_get(3).pg()?,
                        entries: r.try_get(4).pg()?,
                        photos: r.try_get(5).pg()?,
                    })
                })
                .collect::<Result<_>>()?,
            blobs: blobs.try_get(0).pg()?,
            blob_bytes: blobs.try_get(1).pg()?,
        })
    }
}
