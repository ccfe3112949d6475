# The controller-manager image: cmd/controller-manager (the entrypoint) and
# cmd/loadtest-runner (what the load pods run), built with Bazel on Debian
# 12 against its system libraries and run on debian:12-slim with only the
# shared libraries the two binaries link. docs/deploy.md says how to build,
# push and deploy it.
#
#   docker build -t kcr/controller-manager:latest .
#
# test/e2e/dockerfile_test.cc keeps this file in step with the build: the
# build stage installs exactly third_party/deps.sh's packages (by running
# it), and the runtime stage exactly the packages that hold the binaries'
# shared libraries.

FROM debian:12 AS build
# The same toolchain and libraries as a developer machine, from the one
# list (deps.sh installs Bazel too: Debian's bazel-bootstrap 4.2.3).
COPY third_party/deps.sh /tmp/deps.sh
RUN /tmp/deps.sh && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN bazel build -c opt //cmd/controller-manager //cmd/loadtest-runner \
 && install -D -m 0755 bazel-bin/cmd/controller-manager/controller-manager \
      /out/controller-manager \
 && install -D -m 0755 bazel-bin/cmd/loadtest-runner/loadtest-runner \
      /out/loadtest-runner

FROM debian:12-slim
# The Debian packages of the binaries' shared libraries (NEEDED entries),
# nothing else; apt brings what those libraries link in turn.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libabsl20220623 \
      libatomic1 \
      libc6 \
      libcpprest2.10 \
      libgcc-s1 \
      libgflags2.2 \
      libgoogle-glog0v6 \
      libprometheus-cpp-core1.0 \
      libprometheus-cpp-pull1.0 \
      libre2-9 \
      libssl3 \
      libstdc++6 \
      libyaml-cpp0.7 \
      zlib1g \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/controller-manager /usr/local/bin/controller-manager
COPY --from=build /out/loadtest-runner /usr/local/bin/loadtest-runner
# Numeric, so that the kubelet can enforce runAsNonRoot; the Deployment in
# manifests/deploy runs as the same uid and gid.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/controller-manager"]
