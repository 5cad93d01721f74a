"""C++ (and optionally gRPC) libraries from .proto files, with Debian's protoc.

There are no rules_proto/grpc rules offline, so a genrule calls `protoc` and
`grpc_cpp_plugin` from /usr/bin. Import paths are relative to the package that
calls the macro (for //proto: "berth/v1/types.proto"), plus /usr/include for
google/protobuf/*.proto and /usr/share/grpc-proto for gRPC's own protos.
"""

_GRPC_PROTO_ROOT = "/usr/share/grpc-proto"

def cc_proto(name, src, proto_deps = [], deps = [], grpc = False, external = False,
             visibility = None, testonly = False):
    """Declares `name`, a cc_library with the messages (and services) of `src`.

    Args:
      name: the cc_library's name.
      src: the .proto path relative to the package (or to /usr/share/grpc-proto
        when `external`).
      proto_deps: labels of the .proto files `src` imports (inputs of protoc).
      deps: cc_proto libraries of those imports.
      grpc: also generate the gRPC service stubs.
      external: `src` is one of Debian's grpc-proto files, not in the tree.
    """
    base = src[:-len(".proto")]
    outs = [base + ".pb.h", base + ".pb.cc"]
    if grpc:
        outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
    grpc_flags = ""
    if grpc:
        grpc_flags = "--grpc_out=$(RULEDIR) --plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin "
    if external:
        native_srcs = []
        path = _GRPC_PROTO_ROOT + "/" + src
    else:
        native_srcs = [src]
        path = "$(location %s)" % src
    includes = "" if external else "-I%s " % (native.package_name() or ".")
    cmd = "protoc {includes}-I/usr/include -I{grpc_root} --cpp_out=$(RULEDIR) {grpc_flags}{path}".format(
        includes = includes,
        grpc_root = _GRPC_PROTO_ROOT,
        grpc_flags = grpc_flags,
        path = path,
    )
    native.genrule(
        name = name + "_gen",
        srcs = native_srcs + proto_deps,
        outs = outs,
        cmd = cmd,
        testonly = testonly,
    )
    native.cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        includes = ["."],
        deps = deps + ["@system//:protobuf"] + (["@system//:grpcpp"] if grpc else []),
        visibility = visibility,
        testonly = testonly,
    )
