#!/usr/bin/env bash
# Bazel's --workspace_status_command (.bazelrc): the git commit the build is
# made from, for berthd/berthctl/berth-plan --version (tools/bazel/build_info.bzl).
# STABLE_ keys rebuild what uses them when they change. Outside a git
# checkout the commit is "unknown".
commit=$(git rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
if [ "$commit" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  commit="${commit}-dirty"
fi
echo "STABLE_BERTH_COMMIT ${commit}"
