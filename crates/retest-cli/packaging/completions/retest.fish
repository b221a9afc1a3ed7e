# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_retest_global_optspecs
    string join \n store= q/quiet v/verbose h/help V/version
end

function __fish_retest_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_retest_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_retest_using_subcommand
    set -l cmd (__fish_retest_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c retest -n "__fish_retest_needs_command" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_needs_command" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_needs_command" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_needs_command" -s h -l help -d 'Print help'
complete -c retest -n "__fish_retest_needs_command" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_needs_command" -f -a "demo" -d 'The whole workflow on the bundled example, in a scratch directory'
complete -c retest -n "__fish_retest_needs_command" -f -a "init" -d 'Create the store (.retest/) and a starter retest.toml'
complete -c retest -n "__fish_retest_needs_command" -f -a "build" -d 'Run a build command with the compiler wrapper: `retest build -- make -j4`'
complete -c retest -n "__fish_retest_needs_command" -f -a "cfg" -d 'Build and print control-flow graphs of C and C++ functions'
complete -c retest -n "__fish_retest_needs_command" -f -a "cfdg" -d 'Annotate CFG dumps of GCC or LLVM (DOT) with their decisions'
complete -c retest -n "__fish_retest_needs_command" -f -a "coverage" -d 'Coverage reports (text, JSON, LCOV, Cobertura, HTML) up to MC/DC from the recorded coverage'
complete -c retest -n "__fish_retest_needs_command" -f -a "run" -d 'Run the tests and record their outcomes and coverage (the baseline)'
complete -c retest -n "__fish_retest_needs_command" -f -a "merge" -d 'Combine the stores CI workers recorded their shards into (`run --partition`) into one'
complete -c retest -n "__fish_retest_needs_command" -f -a "select" -d 'The tests to rerun for the change since the baseline, with reasons'
complete -c retest -n "__fish_retest_needs_command" -f -a "explain" -d 'Why one test is or is not selected'
complete -c retest -n "__fish_retest_needs_command" -f -a "audit" -d 'Run the whole suite on the current build and check that every test whose behaviour changed since the baseline was selected (exit code 3 on a miss)'
complete -c retest -n "__fish_retest_needs_command" -f -a "compare-algorithms" -d 'Every selection algorithm on the change since the baseline: tests selected, analysis time, and misses if `retest audit` ran on the new build'
complete -c retest -n "__fish_retest_needs_command" -f -a "completions" -d 'Print a shell completion script: `retest completions bash > /etc/bash_completion.d/retest`'
complete -c retest -n "__fish_retest_needs_command" -f -a "man" -d 'Print the manual page (roff) on stdout, or write one page per command into a directory'
complete -c retest -n "__fish_retest_needs_command" -f -a "cc" -d 'The compiler wrapper for C: use as `CC="retest cc"` (all arguments pass to the compiler)'
complete -c retest -n "__fish_retest_needs_command" -f -a "c++" -d 'The compiler wrapper for C++: use as `CXX="retest c++"` (all arguments pass to the compiler)'
complete -c retest -n "__fish_retest_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c retest -n "__fish_retest_using_subcommand demo" -l change -d 'Which bundled change to apply (a directory of examples/cruise/changes)' -r
complete -c retest -n "__fish_retest_using_subcommand demo" -s j -l jobs -d 'Tests run in parallel (default: the number of CPUs)' -r
complete -c retest -n "__fish_retest_using_subcommand demo" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand demo" -l keep -d 'Keep the scratch directory (its path is printed)'
complete -c retest -n "__fish_retest_using_subcommand demo" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand demo" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand demo" -s h -l help -d 'Print help'
complete -c retest -n "__fish_retest_using_subcommand demo" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand init" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand init" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand init" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand init" -s h -l help -d 'Print help'
complete -c retest -n "__fish_retest_using_subcommand init" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand build" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand build" -l mcdc -d 'Also record every decision evaluation\'s condition vector (for MC/DC per evaluation: unique-cause and masking)'
complete -c retest -n "__fish_retest_using_subcommand build" -l paths -d 'Also record Ball–Larus acyclic paths (for `retest select --algorithm path`)'
complete -c retest -n "__fish_retest_using_subcommand build" -l counts -d 'Count executions: each probe adds one to a 64-bit counter instead of storing a byte, so reports show how many times each line ran (costs more than the default probes; see README, "Execution counts")'
complete -c retest -n "__fish_retest_using_subcommand build" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand build" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand build" -s h -l help -d 'Print help'
complete -c retest -n "__fish_retest_using_subcommand build" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand cfg" -s p -l project -d 'Analyse every C and C++ translation unit of a compilation database' -r -F
complete -c retest -n "__fish_retest_using_subcommand cfg" -l function -d 'Only this function' -r
complete -c retest -n "__fish_retest_using_subcommand cfg" -l level -d 'Statement level (one predicate per decision, as DejaVu uses) or condition level (one node per condition of && / || / !, as compilers and MC/DC use)' -r -f -a "statement\t''
condition\t''"
complete -c retest -n "__fish_retest_using_subcommand cfg" -l format -d 'Output format. With -p and no --function, `text` prints a summary' -r -f -a "text\t''
dot\t''
json\t''"
complete -c retest -n "__fish_retest_using_subcommand cfg" -l cc -d 'Compiler used as the preprocessor for FILE (default: $CC, else cc)' -r
complete -c retest -n "__fish_retest_using_subcommand cfg" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand cfg" -l cfdg -d 'Control-flow decision graphs (Kauffman et al. §V): the condition-level CFG with its decisions — DOT clusters `Decision N`, a line per decision in text, `decisions` in JSON. Implies --level condition'
complete -c retest -n "__fish_retest_using_subcommand cfg" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand cfg" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand cfg" -s h -l help -d 'Print help'
complete -c retest -n "__fish_retest_using_subcommand cfg" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand cfdg" -l format -d 'What to print for a single input file' -r -f -a "dot\t'The input graph with a cluster `Decision N` around each decision'
json\t'The decisions (`retest.cfdg/1`)'"
complete -c retest -n "__fish_retest_using_subcommand cfdg" -s o -l output -d 'Write to this file instead of stdout (a single input file)' -r -F
complete -c retest -n "__fish_retest_using_subcommand cfdg" -l out-dir -d 'Write both `NAME.cfdg.dot` and `NAME.cfdg.json` for every input into this directory' -r -F
complete -c retest -n "__fish_retest_using_subcommand cfdg" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand cfdg" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand cfdg" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand cfdg" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retest -n "__fish_retest_using_subcommand cfdg" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand coverage" -l format -r -f -a "text\t''
json\t''
lcov\t''
cobertura\t'Cobertura XML (Jenkins, GitLab)'
html\t'A self-contained HTML report in the directory given with -o'
matrix\t'The raw coverage matrix: per test, per unit, the covered condition-level edge ids (`retest.matrix/1`), for exact comparisons'"
complete -c retest -n "__fish_retest_using_subcommand coverage" -l criteria -d 'Coverage criteria to report: sc, dc, cc, dcc, mcc, fpc, mcdc (Kauffman et al. §VI, on each test\'s set of walked edges), mcdc-unique, mcdc-masking, mcdc-strict (MC/DC per decision evaluation: unique-cause, masking, strict unique-cause), or `all`. Default for html: all' -r
complete -c retest -n "__fish_retest_using_subcommand coverage" -l reading -d 'How to read the formulas of §VI: as the prose means them, or as printed' -r -f -a "intended\t'What the prose of 001 §VI says (two runs for both outcomes, …)'
as-printed\t'The formulas of 001 §VI exactly as printed'"
complete -c retest -n "__fish_retest_using_subcommand coverage" -l fail-under -d 'Fail (exit code 4) when a measure is under a percentage: CRITERION=PCT, where CRITERION is one of --criteria\'s names or lines, branches, functions' -r
complete -c retest -n "__fish_retest_using_subcommand coverage" -l html -d 'The HTML report into this directory (the same as --format html -o DIR)' -r -F
complete -c retest -n "__fish_retest_using_subcommand coverage" -l tests -d 'Only these tests (comma-separated names)' -r
complete -c retest -n "__fish_retest_using_subcommand coverage" -l tests-from -d 'Only the tests named in this file (one per line)' -r -F
complete -c retest -n "__fish_retest_using_subcommand coverage" -s o -l output -d 'Write the report to this file instead of stdout (for html: the directory)' -r -F
complete -c retest -n "__fish_retest_using_subcommand coverage" -l snapshot -d 'Report the matrix of this snapshot (default: the baseline)' -r
complete -c retest -n "__fish_retest_using_subcommand coverage" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand coverage" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand coverage" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand coverage" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retest -n "__fish_retest_using_subcommand coverage" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand run" -l universe -d 'A universe file: one shell command per line, run from the file\'s directory; test N is named tN' -r -F
complete -c retest -n "__fish_retest_using_subcommand run" -l ctest -d 'A CMake build directory: tests from `ctest --show-only=json-v1`' -r -F
complete -c retest -n "__fish_retest_using_subcommand run" -l tests -d 'A retest.toml (default: retest.toml in the current directory, else in the project root)' -r -F
complete -c retest -n "__fish_retest_using_subcommand run" -l filter -d 'Only tests whose name matches this pattern (`*` and `?` wildcards)' -r
complete -c retest -n "__fish_retest_using_subcommand run" -s j -l jobs -d 'Tests run in parallel (default: the number of CPUs)' -r
complete -c retest -n "__fish_retest_using_subcommand run" -l timeout -d 'Timeout per test in seconds, for tests that set none' -r
complete -c retest -n "__fish_retest_using_subcommand run" -l partition -d 'Run one shard of the tests, for CI workers that split the suite: `hash:K/N` (shard K of N by a stable hash of each test\'s key — XXH64 — so a test keeps its shard as others come and go) or `count:K/N` (round-robin over the tests sorted by key: even shards). Applies after --filter and --selected. A shard\'s run makes the build the baseline, complete once every shard has recorded' -r
complete -c retest -n "__fish_retest_using_subcommand run" -l build -d 'With --selected: the build command (run with `sh -c`), if `retest build` did not record one' -r
complete -c retest -n "__fish_retest_using_subcommand run" -l format -d '`text` for people; `json` (`retest.run/1`, docs/json.md) on stdout for machines, the summary then going to stderr' -r -f -a "text\t''
json\t''"
complete -c retest -n "__fish_retest_using_subcommand run" -l junit -d 'Also write the run as JUnit XML to FILE (replaced atomically), for CI test reports; with --selected the tests not selected are `<skipped>`' -r -F
complete -c retest -n "__fish_retest_using_subcommand run" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand run" -l list -d 'List the tests and exit'
complete -c retest -n "__fish_retest_using_subcommand run" -l selected -d 'Run only the tests selected for the change since the baseline, on a build instrumented only where the change can have an effect, and bring every test\'s coverage up to date (RECOVER); the new version becomes the baseline'
complete -c retest -n "__fish_retest_using_subcommand run" -l keep-selective -d 'With --selected: leave the selectively instrumented objects in place'
complete -c retest -n "__fish_retest_using_subcommand run" -l full-probes -d 'With --selected: run the selected tests on the current, fully instrumented build, with no rebuild (default: weighed by the recorded test and build times — the whole suite when it costs little more, selective instrumentation when it saves more than two rebuilds cost)'
complete -c retest -n "__fish_retest_using_subcommand run" -l selective-probes -d 'With --selected: always rebuild with selective instrumentation, however few probes it removes'
complete -c retest -n "__fish_retest_using_subcommand run" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand run" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand run" -s h -l help -d 'Print help'
complete -c retest -n "__fish_retest_using_subcommand run" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand merge" -l into -d 'The store to merge into: a file (created from a copy of the first shard when it does not exist) or a PostgreSQL URL (given the shards\' build when it does not hold it); default: the project\'s store' -r -F
complete -c retest -n "__fish_retest_using_subcommand merge" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand merge" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand merge" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand merge" -s h -l help -d 'Print help'
complete -c retest -n "__fish_retest_using_subcommand merge" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand select" -s p -l project -d 'Analyse the sources named by this compilation database as the new version, without building (default: the newest snapshot built with the wrapper)' -r -F
complete -c retest -n "__fish_retest_using_subcommand select" -l algorithm -r -f -a "dejavu\t'Rothermel & Harrold\'s DejaVu (default): tests through a dangerous edge'
partial\t'Ball\'s partial-reachability: tests through a transition leaving V\'\'_accept'
full\t'Ball\'s full-reachability: tests whose covered edges reach `reject` from the entry in G\'\''
valid\t'Ball\'s valid-reachability (⊑ by dominance only: coverage is a union of executions)'
path\t'Ball\'s path-based selection on the acyclic paths `retest build --paths` recorded, refined by valid-reachability; edge coverage where no paths were recorded'
function\t'Tests that executed any changed function (testmon / RustyRTS granularity)'
file\t'Tests that executed anything in a changed translation unit (Ekstazi granularity)'"
complete -c retest -n "__fish_retest_using_subcommand select" -l class -d 'Class-level selection (003 §4): the tests to rerun for changes in this C++ class and its bases only (its methods and the ones it inherits); changes elsewhere are counted, not considered' -r
complete -c retest -n "__fish_retest_using_subcommand select" -l universe -d 'A universe file: one shell command per line, run from the file\'s directory; test N is named tN' -r -F
complete -c retest -n "__fish_retest_using_subcommand select" -l ctest -d 'A CMake build directory: tests from `ctest --show-only=json-v1`' -r -F
complete -c retest -n "__fish_retest_using_subcommand select" -l tests -d 'A retest.toml (default: retest.toml in the current directory, else in the project root)' -r -F
complete -c retest -n "__fish_retest_using_subcommand select" -l format -r -f -a "text\t'Test names, each with one line of reason (also accepted as `human`)'
json\t'`retest.selection/1`'
names\t'One name per line (for `ctest --tests-from-file` or scripts)'
ctest\t'A regular expression for `ctest -R`'
gtest-filter\t'Per GoogleTest binary, a command line that runs its selected cases: `BINARY --gtest_filter=Suite.A:Suite.B` (none when nothing is selected)'"
complete -c retest -n "__fish_retest_using_subcommand select" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand select" -l naive -d 'Compare every pair of same-named procedures instead of walking from `main`'
complete -c retest -n "__fish_retest_using_subcommand select" -l skip-constructor-and-operator-changes -d 'Select no test for changes in constructors and operators, to test them on their own (003 §6.4); what is set aside is listed. Also `skip_constructor_and_operator_changes` in retest.toml\'s `[select]`, beside `not_under_test` (driver, setup and oracle code)'
complete -c retest -n "__fish_retest_using_subcommand select" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand select" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand select" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retest -n "__fish_retest_using_subcommand select" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand explain" -s p -l project -d 'Analyse the sources named by this compilation database as the new version, without building (default: the newest snapshot built with the wrapper)' -r -F
complete -c retest -n "__fish_retest_using_subcommand explain" -l algorithm -r -f -a "dejavu\t'Rothermel & Harrold\'s DejaVu (default): tests through a dangerous edge'
partial\t'Ball\'s partial-reachability: tests through a transition leaving V\'\'_accept'
full\t'Ball\'s full-reachability: tests whose covered edges reach `reject` from the entry in G\'\''
valid\t'Ball\'s valid-reachability (⊑ by dominance only: coverage is a union of executions)'
path\t'Ball\'s path-based selection on the acyclic paths `retest build --paths` recorded, refined by valid-reachability; edge coverage where no paths were recorded'
function\t'Tests that executed any changed function (testmon / RustyRTS granularity)'
file\t'Tests that executed anything in a changed translation unit (Ekstazi granularity)'"
complete -c retest -n "__fish_retest_using_subcommand explain" -l class -d 'Class-level selection (003 §4): the tests to rerun for changes in this C++ class and its bases only (its methods and the ones it inherits); changes elsewhere are counted, not considered' -r
complete -c retest -n "__fish_retest_using_subcommand explain" -l universe -d 'A universe file: one shell command per line, run from the file\'s directory; test N is named tN' -r -F
complete -c retest -n "__fish_retest_using_subcommand explain" -l ctest -d 'A CMake build directory: tests from `ctest --show-only=json-v1`' -r -F
complete -c retest -n "__fish_retest_using_subcommand explain" -l tests -d 'A retest.toml (default: retest.toml in the current directory, else in the project root)' -r -F
complete -c retest -n "__fish_retest_using_subcommand explain" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand explain" -l naive -d 'Compare every pair of same-named procedures instead of walking from `main`'
complete -c retest -n "__fish_retest_using_subcommand explain" -l skip-constructor-and-operator-changes -d 'Select no test for changes in constructors and operators, to test them on their own (003 §6.4); what is set aside is listed. Also `skip_constructor_and_operator_changes` in retest.toml\'s `[select]`, beside `not_under_test` (driver, setup and oracle code)'
complete -c retest -n "__fish_retest_using_subcommand explain" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand explain" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retest -n "__fish_retest_using_subcommand explain" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand audit" -s p -l project -d 'Analyse the sources named by this compilation database as the new version, without building (default: the newest snapshot built with the wrapper)' -r -F
complete -c retest -n "__fish_retest_using_subcommand audit" -l algorithm -r -f -a "dejavu\t'Rothermel & Harrold\'s DejaVu (default): tests through a dangerous edge'
partial\t'Ball\'s partial-reachability: tests through a transition leaving V\'\'_accept'
full\t'Ball\'s full-reachability: tests whose covered edges reach `reject` from the entry in G\'\''
valid\t'Ball\'s valid-reachability (⊑ by dominance only: coverage is a union of executions)'
path\t'Ball\'s path-based selection on the acyclic paths `retest build --paths` recorded, refined by valid-reachability; edge coverage where no paths were recorded'
function\t'Tests that executed any changed function (testmon / RustyRTS granularity)'
file\t'Tests that executed anything in a changed translation unit (Ekstazi granularity)'"
complete -c retest -n "__fish_retest_using_subcommand audit" -l class -d 'Class-level selection (003 §4): the tests to rerun for changes in this C++ class and its bases only (its methods and the ones it inherits); changes elsewhere are counted, not considered' -r
complete -c retest -n "__fish_retest_using_subcommand audit" -l universe -d 'A universe file: one shell command per line, run from the file\'s directory; test N is named tN' -r -F
complete -c retest -n "__fish_retest_using_subcommand audit" -l ctest -d 'A CMake build directory: tests from `ctest --show-only=json-v1`' -r -F
complete -c retest -n "__fish_retest_using_subcommand audit" -l tests -d 'A retest.toml (default: retest.toml in the current directory, else in the project root)' -r -F
complete -c retest -n "__fish_retest_using_subcommand audit" -l format -r -f -a "text\t''
json\t''"
complete -c retest -n "__fish_retest_using_subcommand audit" -s j -l jobs -d 'Tests run in parallel (default: the number of CPUs)' -r
complete -c retest -n "__fish_retest_using_subcommand audit" -l timeout -d 'Timeout per test in seconds, for tests that set none' -r
complete -c retest -n "__fish_retest_using_subcommand audit" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand audit" -l naive -d 'Compare every pair of same-named procedures instead of walking from `main`'
complete -c retest -n "__fish_retest_using_subcommand audit" -l skip-constructor-and-operator-changes -d 'Select no test for changes in constructors and operators, to test them on their own (003 §6.4); what is set aside is listed. Also `skip_constructor_and_operator_changes` in retest.toml\'s `[select]`, beside `not_under_test` (driver, setup and oracle code)'
complete -c retest -n "__fish_retest_using_subcommand audit" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand audit" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand audit" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retest -n "__fish_retest_using_subcommand audit" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -s p -l project -d 'Analyse the sources named by this compilation database as the new version, without building (default: the newest snapshot built with the wrapper)' -r -F
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -l algorithm -r -f -a "dejavu\t'Rothermel & Harrold\'s DejaVu (default): tests through a dangerous edge'
partial\t'Ball\'s partial-reachability: tests through a transition leaving V\'\'_accept'
full\t'Ball\'s full-reachability: tests whose covered edges reach `reject` from the entry in G\'\''
valid\t'Ball\'s valid-reachability (⊑ by dominance only: coverage is a union of executions)'
path\t'Ball\'s path-based selection on the acyclic paths `retest build --paths` recorded, refined by valid-reachability; edge coverage where no paths were recorded'
function\t'Tests that executed any changed function (testmon / RustyRTS granularity)'
file\t'Tests that executed anything in a changed translation unit (Ekstazi granularity)'"
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -l class -d 'Class-level selection (003 §4): the tests to rerun for changes in this C++ class and its bases only (its methods and the ones it inherits); changes elsewhere are counted, not considered' -r
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -l universe -d 'A universe file: one shell command per line, run from the file\'s directory; test N is named tN' -r -F
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -l ctest -d 'A CMake build directory: tests from `ctest --show-only=json-v1`' -r -F
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -l tests -d 'A retest.toml (default: retest.toml in the current directory, else in the project root)' -r -F
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -l format -d '`text`, or `json` (`retest.compare/1`)' -r -f -a "text\t''
json\t''"
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -l naive -d 'Compare every pair of same-named procedures instead of walking from `main`'
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -l skip-constructor-and-operator-changes -d 'Select no test for changes in constructors and operators, to test them on their own (003 §6.4); what is set aside is listed. Also `skip_constructor_and_operator_changes` in retest.toml\'s `[select]`, beside `not_under_test` (driver, setup and oracle code)'
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retest -n "__fish_retest_using_subcommand compare-algorithms" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand completions" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand completions" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand completions" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand completions" -s h -l help -d 'Print help'
complete -c retest -n "__fish_retest_using_subcommand completions" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand man" -l dir -d 'Write `retest.1` and `retest-COMMAND.1` for every command into this directory' -r -F
complete -c retest -n "__fish_retest_using_subcommand man" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand man" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand man" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand man" -s h -l help -d 'Print help'
complete -c retest -n "__fish_retest_using_subcommand man" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand cc" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand cc" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand cc" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand cc" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand c++" -l store -d 'The store (a project root or its `.retest` directory); default: `.retest` in the current directory or its nearest parent' -r -F
complete -c retest -n "__fish_retest_using_subcommand c++" -s q -l quiet -d 'Print only errors, warnings and the result lines machines read (no notes, summaries or progress bars)'
complete -c retest -n "__fish_retest_using_subcommand c++" -s v -l verbose -d 'Print more: a line per finished test, and what the engine decides'
complete -c retest -n "__fish_retest_using_subcommand c++" -s V -l version -d 'Print version'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "demo" -d 'The whole workflow on the bundled example, in a scratch directory'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "init" -d 'Create the store (.retest/) and a starter retest.toml'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "build" -d 'Run a build command with the compiler wrapper: `retest build -- make -j4`'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "cfg" -d 'Build and print control-flow graphs of C and C++ functions'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "cfdg" -d 'Annotate CFG dumps of GCC or LLVM (DOT) with their decisions'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "coverage" -d 'Coverage reports (text, JSON, LCOV, Cobertura, HTML) up to MC/DC from the recorded coverage'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "run" -d 'Run the tests and record their outcomes and coverage (the baseline)'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "merge" -d 'Combine the stores CI workers recorded their shards into (`run --partition`) into one'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "select" -d 'The tests to rerun for the change since the baseline, with reasons'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "explain" -d 'Why one test is or is not selected'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "audit" -d 'Run the whole suite on the current build and check that every test whose behaviour changed since the baseline was selected (exit code 3 on a miss)'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "compare-algorithms" -d 'Every selection algorithm on the change since the baseline: tests selected, analysis time, and misses if `retest audit` ran on the new build'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "completions" -d 'Print a shell completion script: `retest completions bash > /etc/bash_completion.d/retest`'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "man" -d 'Print the manual page (roff) on stdout, or write one page per command into a directory'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "cc" -d 'The compiler wrapper for C: use as `CC="retest cc"` (all arguments pass to the compiler)'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "c++" -d 'The compiler wrapper for C++: use as `CXX="retest c++"` (all arguments pass to the compiler)'
complete -c retest -n "__fish_retest_using_subcommand help; and not __fish_seen_subcommand_from demo init build cfg cfdg coverage run merge select explain audit compare-algorithms completions man cc c++ help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
