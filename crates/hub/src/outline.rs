//! A session's outline from the hub: the read engine's [`outline_of`] over one host's rows of the
//! session, the tool calls each line made (`calls`) and the line each response stands on
//! (`usage.local_id`), as that host's index has them: the outline its own server gives.

use std::collections::HashMap;

use scrollback_core::error::Result;
use scrollback_read::history::{Mask, Outline, OutlineRow, OutlineSource, USER_ENTRY, outline_of};

use crate::Pg;
use crate::store::HubStore;

/// The outline of `session_id`, from the host it is read from; `None` if no host holds it.
pub(crate) fn outline(store: &HubStore, session_id: &str, mask: Option<&dyn Mask>) -> Result<Option<Outline>> {
    let Some(host) = store.host_of(session_id)? else { return Ok(None) };
    // One snapshot for the rows, their tool calls and their tokens, as an index reads them.
    store.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
    let outline = outline_of(&HubOutline { store, host: &host }, session_id, mask);
    let end = store.batch("COMMIT");
    let outline = outline?;
    end?;
    Ok(outline)
}

/// One host's rows of a session, as [`outline_of`] asks for them.
struct HubOutline<'a> {
    store: &'a HubStore,
    host: &'a str,
}

impl OutlineSource for HubOutline<'_> {
    fn holds(&self, session_id: &str) -> Result<bool> {
        let row =
            self.store.query_opt("SELECT 1 FROM sessions WHERE host = $1 AND id = $2", &[&self.host, &session_id])?;
        Ok(row.is_some())
    }

    fn tokens(&self, session_id: &str) -> Result<HashMap<i64, Vec<(i64, i64)>>> {
        let mut tokens: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
        for r in self.store.query(
            "SELECT local_id, input_tokens + cache_read_tokens + cache_write_tokens, output_tokens
             FROM usage WHERE host = $1 AND session_id = $2 AND local_id IS NOT NULL",
            &[&self.host, &session_id],
        )? {
            tokens.entry(r.try_get(0).pg()?).or_default().push((r.try_get(1).pg()?, r.try_get(2).pg()?));
        }
        Ok(tokens)
    }

    fn rows(&self, session_id: &str, head: usize, each: &mut dyn FnMut(OutlineRow) -> Result<()>) -> Result<()> {
        let rows = self.store.query(
            &format!(
                r#"SELECT e.local_id, e.type, e.role, e.timestamp, CASE WHEN {USER_ENTRY} THEN substr(e.text, 1, $3) END,
                        coalesce(c.calls, 0)
                 FROM entries e
                 LEFT JOIN calls c ON c.host = e.host AND c.session_id = e.session_id AND c.local_id = e.local_id
                 WHERE e.host = $1 AND e.session_id = $2 AND NOT e.duplicate AND e.invalid IS NULL
                   AND NOT e.is_sidechain
                 ORDER BY e.sort_at COLLATE "C", e.sort_file, e.line, e.local_id"#
            ),
            &[&self.host, &session_id, &(head as i32)],
        )?;
        for r in rows {
            each(OutlineRow {
                cursor: r.try_get(0).pg()?,
                kind: r.try_get(1).pg()?,
                role: r.try_get(2).pg()?,
                timestamp: r.try_get(3).pg()?,
                head: r.try_get(4).pg()?,
                calls: r.try_get(5).pg()?,
            })?;
        }
        Ok(())
    }
}
