"""`tvm-course site build` and `tvm-course site serve`: the course website.

Exit codes: 0 built / served, 1 the build failed (a lesson raised, a quiz has errors, the
course map has problems), 2 usage errors (an output folder that is not ours or cannot be written, a
repository URL that is not a GitHub repository's, no site to serve).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import ExitCode


def register(subparsers) -> None:
    from autograder.site import DEFAULT_OUT
    from autograder.syllabus import DEFAULT_PATH

    parser = subparsers.add_parser("site", help="the course website: build it, serve it on 127.0.0.1",
                                   description="The course website: the map, a page per lesson with its "
                                               "executed notebook and its self-check quiz.")
    sub = parser.add_subparsers(dest="site_command", metavar="ACTION")
    sub.required = True

    p = sub.add_parser("build", help="build the static site (executes the lessons, reusing cached runs)",
                       description="Build the static site. Lessons are executed by a real kernel; executed "
                                   "copies are cached (see TVM_COURSE_CACHE) and reused while their sources "
                                   "are unchanged. Open OUT/index.html in a browser, or run `tvm-course site serve`.")
    p.add_argument("-o", "--output", default=str(DEFAULT_OUT), metavar="DIR", help=f"output folder (default: {DEFAULT_OUT}/)")
    p.add_argument("--syllabus", default=str(DEFAULT_PATH), help="the course map (default: course/syllabus.yaml)")
    p.add_argument("--refresh", action="store_true", help="execute every lesson again, ignoring the cache")
    p.add_argument("--repo-url", default=None, metavar="URL",
                   help="the course's public GitHub repository (https://github.com/OWNER/REPO): lesson pages then "
                        "link 'Open in Colab' and 'Launch Binder' for their notebook (default: $TVM_COURSE_REPO_URL; "
                        "without it, pages offer the notebook to download only)")
    p.add_argument("--repo-branch", default="main", metavar="BRANCH",
                   help="the branch those links open (default: main)")
    p.set_defaults(handler=run_build)

    p = sub.add_parser("serve", help="serve a built site on http://127.0.0.1:PORT/ (loopback only)")
    p.add_argument("-d", "--directory", default=str(DEFAULT_OUT), metavar="DIR", help=f"the built site (default: {DEFAULT_OUT}/)")
    p.add_argument("-p", "--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.set_defaults(handler=run_serve)


def run_build(args) -> int:
    from autograder.quiz.diagnostics import QuizFileError
    from autograder.site.build import OutputFolderError, SiteBuildError, build_site
    from autograder.site.executed import LessonExecutionError
    from autograder.site.notebook_links import RepositoryURLError
    from autograder.site.quiz_html import QuizBuildError

    from autograder.syllabus import DEFAULT_PATH

    if args.syllabus == str(DEFAULT_PATH) and not DEFAULT_PATH.is_file():
        print("tvm-course site build: building the website is an instructor's and author's command: it executes the "
              "lessons of course/syllabus.yaml in the course's repository, which this installation has not "
              "(students: the website comes built, `tvm-course site serve -d site` serves it).", file=sys.stderr)
        return ExitCode.USAGE_ERROR

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    try:
        report = build_site(args.output, args.syllabus, refresh=args.refresh, repo_url=args.repo_url,
                            repo_branch=args.repo_branch, log=log)
    except (OutputFolderError, RepositoryURLError) as err:
        print(f"tvm-course site build: {err}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    except (SiteBuildError, LessonExecutionError, QuizBuildError, QuizFileError) as err:
        print(f"tvm-course site build: {err}", file=sys.stderr)
        return ExitCode.FAILED
    reused = f", {len(report.from_cache)} lesson(s) from the cache" if report.from_cache else ""
    print(f"built {len(report.pages)} pages in {report.seconds:.1f} s "
          f"({len(report.executed)} lesson(s) executed{reused})")
    print(f"open {report.index.as_uri()}  (or: tvm-course site serve -d {args.output})")
    return ExitCode.OK


def run_serve(args) -> int:
    from autograder.site.serve import SiteServer

    try:
        server = SiteServer(args.directory, args.port)
    except FileNotFoundError as err:
        print(f"tvm-course site serve: {err}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    except OSError as err:
        print(f"tvm-course site serve: cannot listen on 127.0.0.1:{args.port}: {err.strerror}; "
              "try another --port (0 picks a free one)", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    print(f"serving {Path(args.directory).resolve()} at {server.url}  (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return ExitCode.OK
