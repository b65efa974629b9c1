# Sourced by ./tq and .ci/run: points JAVA_HOME at a JDK 25 or newer.
# Order: $JAVA_HOME if it is 25+, then the default `java` if it is 25+, then the JDKs under /usr/lib/jvm.
# On failure it prints one line and returns 1.

tq_java_feature() { # prints the feature release of the java binary $1 (e.g. 25), or nothing
  "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n 1
}

tq_select_jdk() {
  local candidate feature
  local -a candidates=()
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  for candidate in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do candidates+=("$candidate"); done
  for candidate in "${candidates[@]}"; do
    [ -x "$candidate/bin/java" ] && [ -x "$candidate/bin/javac" ] || continue
    feature=$(tq_java_feature "$candidate/bin/java")
    if [ -n "$feature" ] && [ "$feature" -ge 25 ]; then
      export JAVA_HOME="$candidate"
      export PATH="$JAVA_HOME/bin:$PATH"
      return 0
    fi
  done
  echo "tq: no JDK 25 found (looked at JAVA_HOME, the default java and /usr/lib/jvm/*); install one and set JAVA_HOME to it." >&2
  return 1
}
