# Sourced by bin/* and .ci/run: selects the JDK we build with, whatever the caller's shell has.
COMMPLAN_JDK=${COMMPLAN_JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
if [ ! -x "$COMMPLAN_JDK/bin/javac" ]; then
  echo "CommPlan builds with JDK 25: no javac at $COMMPLAN_JDK/bin (set COMMPLAN_JDK to a JDK 25 home)" >&2
  exit 1
fi
export JAVA_HOME=$COMMPLAN_JDK
export PATH="$COMMPLAN_JDK/bin:$PATH"
