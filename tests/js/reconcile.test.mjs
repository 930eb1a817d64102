// The viewer's reconcile rule (crates/http/web/reconcile.js) against the shared vectors in
// tests/vectors/reconcile/, which the Rust rule is checked against too. Run: node --test tests/js/
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join, dirname } from "node:path";
import { reconcile, normalize } from "../../crates/http/web/reconcile.js";

const here = dirname(fileURLToPath(import.meta.url));
const dir = join(here, "..", "vectors", "reconcile");
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();

test("there are at least 25 vectors", () => {
  assert.ok(files.length >= 25, `${files.length} vectors`);
});

for (const file of files) {
  const vector = JSON.parse(readFileSync(join(dir, file), "utf8"));
  test(`${file}: ${vector.description}`, () => {
    const got = reconcile(vector.entries, vector.pending);
    const retired = got.retired.map(({ clientMessageId, uuid }) => ({ clientMessageId, uuid }));
    assert.deepEqual(retired, vector.expected.retired);
    assert.deepEqual(got.stillPending, vector.expected.stillPending);
  });
}

test("normalize undoes what the transcript writer does", () => {
  assert.equal(normalize("[Image #1] [Image #2] look\r\nhere  \n"), "look\nhere");
  assert.equal(normalize("[Image #x] stays"), "[Image #x] stays");
  assert.equal(normalize("a [Image #12]b"), "a b");
});
