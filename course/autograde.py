"""Autograde a class: nbgrader's autograde, one submission per task, in parallel, merged safely.

Each worker process keeps its own scratch copy of the course (config, the chapter's source and a
gradebook of its own) and grades one submission at a time there, with nbgrader's own Autograde
converter (`NbGraderAPI.autograde`) and `course.execute.JudgedExecute` in place of its Execute.
Only the parent process writes the course's gradebook (sqlite by default, any `db_url`
nbgrader accepts): it copies each submission's per-cell scores, comments and late penalty, so
workers never contend for the database and a worker that crashes loses nothing but its current
submission, which is retried once and otherwise reported.

Every submission ends in the gradebook with a score on every grade cell (zero where the
notebook could not be graded) and, when something went wrong, a line in `needs_attention`:
timeouts, a dead kernel, cells the student deleted (restored and graded), missing answers.
"""

import concurrent.futures
import datetime
import os
import shutil
import stat
import sys
import tempfile
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .cluster import WorkerLost
from .execute import JudgedExecute
from .judge import ATTENTION_KEY
from .preprocessors import RestoreCells
from .kernel_zygote import KernelZygote, ZygoteKernelManager
from .sandbox import Zygote, heavy_imports
from .pipeline import (
    REPOSITORY,
    Course,
    NbgraderCourse,
    PipelineError,
    cell_error,
    execution_seconds,
    grade_cells,
    read_notebook,
    trimmed_notebook,
)

MAX_ZIP_BYTES = 2 << 30


@dataclass
class Settings:
    chapter: str
    root: Path = REPOSITORY  # the course: solutions/, course/nbgrader_config.py, course/autograded/
    workers: int = 1
    db_url: str | None = None  # default: the course's own (course/gradebook.db)
    cell_timeout: int = 60
    notebook_timeout: int = 600
    memory_mb: int = 1024
    cluster: str | None = None  # a Dask scheduler's address (tcp://host:8786) or local:N; None: a local pool

    @property
    def gradebook(self):
        return self.db_url or "sqlite:///" + str(Path(self.root) / "course" / "gradebook.db")


@dataclass
class CellScore:
    name: str
    score: float | None  # None: a written answer waiting for a person
    max_score: float
    error: str | None = None
    manual: bool = False  # a written answer (nbgrader: solution and grade), graded by hand


@dataclass
class StudentResult:
    student: str
    cells: dict = field(default_factory=dict)  # grade_id -> CellScore, in notebook order
    comments: dict = field(default_factory=dict)  # solution cell -> nbgrader's auto comment
    late_penalty: float | None = None
    timestamp: str | None = None
    attention: list = field(default_factory=list)  # what the instructor should look at
    seconds: float | None = None

    @property
    def score(self):
        return sum(c.score or 0.0 for c in self.cells.values())

    @property
    def max_score(self):
        return sum(c.max_score for c in self.cells.values())


# --------------------------------------------------------------------------- submissions
def find_submissions(source, chapter, extract_to):
    """{student: folder} from an nbgrader `submitted/` folder (<student>/<chapter>/) or a zip of one."""
    source = Path(source)
    if source.is_file() and zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            if sum(info.file_size for info in archive.infolist()) > MAX_ZIP_BYTES:
                raise PipelineError(f"{source}: more than {MAX_ZIP_BYTES >> 30} GiB uncompressed")
            unsafe = [info.filename for info in archive.infolist() if _unsafe_member(info)]
            if unsafe:
                raise PipelineError(f"{source}: refusing a zip with absolute paths, '..' or links in it: "
                                    f"{', '.join(unsafe[:10])}")
            archive.extractall(extract_to)
        source = _submitted_root(Path(extract_to), chapter)
    if not source.is_dir():
        raise PipelineError(f"{source}: expected a folder of <student>/{chapter}/ submissions or a zip of one")
    submissions = {}
    for student in sorted(p for p in source.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        if (student / chapter).is_dir():
            submissions[student.name] = student / chapter  # a link among them is refused when copied
    return submissions


def _unsafe_member(info):
    parts = info.filename.replace("\\", "/").split("/")
    link = stat.S_ISLNK(info.external_attr >> 16)
    return info.filename.startswith(("/", "\\")) or ".." in parts or ":" in parts[0] or link


def copy_submission(folder, target):
    """Copy a submission's folder as data: regular files and folders only, links never followed
    (a notebook linked to the solution, or to any file, is not read). Returns attention lines."""
    folder, target = Path(folder), Path(target)
    if folder.is_symlink() or folder.parent.is_symlink():
        return ["the submission's folder is a link: refused, scored zero"]
    links = []
    for here, dirs, files in os.walk(folder, followlinks=False):
        relative = Path(here).relative_to(folder)
        (target / relative).mkdir(parents=True, exist_ok=True)
        for name in [*dirs, *files]:
            path = Path(here) / name
            if path.is_symlink():
                links.append(str(relative / name))
        dirs[:] = [d for d in dirs if not d.startswith(".") and not (Path(here) / d).is_symlink()]
        for name in files:
            path = Path(here) / name
            if name.startswith(".") or path.is_symlink() or not stat.S_ISREG(path.lstat().st_mode):
                continue
            with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as src, open(target / relative / name, "wb") as dst:
                shutil.copyfileobj(src, dst)
    return [f"links in the submission, refused (not read): {', '.join(sorted(links)[:10])}"] if links else []


def _submitted_root(root, chapter):
    """The folder holding <student>/<chapter>/ inside an extracted zip (it may be nested)."""
    for candidate in [root, *sorted(p for p in root.rglob("*") if p.is_dir())]:
        if any((student / chapter).is_dir() for student in candidate.iterdir() if student.is_dir()):
            return candidate
    return root


def valid_student_id(student):
    """A name that is safe as a folder and a gradebook key: no path characters, nothing hidden."""
    return bool(student) and len(student) <= 128 and student == student.strip() and student != PREFLIGHT \
        and not any(c in student for c in "+/\\:") and not student.startswith(".") \
        and all(c.isprintable() for c in student)


# --------------------------------------------------------------------------- one submission, in a worker
_WORKER = {}


def _worker_course(template, chapter):
    """This worker process's own copy of the scratch course and its two zygotes, which preload the
    heavy modules the chapter imports (made on its first submission, removed when the worker exits)."""
    if "root" not in _WORKER:
        from multiprocessing.util import Finalize

        root = Path(tempfile.mkdtemp(prefix=f"minigrad-worker-{os.getpid()}-"))
        shutil.copytree(template, root, dirs_exist_ok=True)
        root.chmod(0o700)  # private: the gradebook copy, the zygote's socket, the kernels' sockets
        _WORKER["root"] = root
        heavy = heavy_imports(root / "solutions" / chapter / f"{chapter}.ipynb")
        _WORKER["zygote"] = zygote = Zygote(str(root), heavy)
        Finalize(None, zygote.close, exitpriority=10)
        _WORKER["kernel_zygote"] = kernel_zygote = KernelZygote(str(root), heavy)
        Finalize(None, kernel_zygote.close, exitpriority=10)
        Finalize(None, shutil.rmtree, args=(root, True), exitpriority=5)
    return _WORKER["root"]


def grade_submission(template, settings, student, folder, autograded_target):
    """Grade one submission in this worker's course; returns a StudentResult. The autograded
    folder is copied to `autograded_target` (the course's own, per student: no contention), if any."""
    chapter = settings.chapter
    root = _worker_course(template, chapter)
    submitted = root / "course" / "submitted" / student / chapter
    autograded = root / "course" / "autograded" / student / chapter
    for path in (submitted, autograded):
        shutil.rmtree(path, ignore_errors=True)
    result = StudentResult(student)
    try:
        result.attention += copy_submission(folder, submitted)
        if not (submitted / f"{chapter}.ipynb").exists():
            result.attention.append(f"no {chapter}.ipynb in the submission: scored zero")
        outcome = _nbgrader_autograde(root, settings, student)
        if not outcome["success"]:
            result.attention.append("nbgrader could not autograde it: " + _last_line(outcome.get("error") or ""))
        _read_gradebook(root, settings, student, result)
        if (autograded / f"{chapter}.ipynb").exists():
            _read_notebook(autograded / f"{chapter}.ipynb", result)
            if autograded_target is not None:
                shutil.rmtree(autograded_target, ignore_errors=True)
                shutil.copytree(autograded, autograded_target)
    finally:
        for path in (submitted, autograded):
            shutil.rmtree(path, ignore_errors=True)
    return result


def _nbgrader_api(root, config=None):
    """nbgrader's Python API on the course at `root` (its course/nbgrader_config.py, plus `config`)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    loaded = PyFileConfigLoader("nbgrader_config.py", path=str(root / "course")).load_config()
    if config is not None:
        loaded.merge(config)
    return NbGraderAPI(coursedir=CourseDirectory(config=loaded), config=loaded)


def _nbgrader_autograde(root, settings, student):
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute, OverwriteCells
    from traitlets.config import Config

    config = Config()
    defaults = Autograde.class_traits()
    config.Autograde.sanitize_preprocessors = [
        RestoreCells if p is OverwriteCells else p for p in defaults["sanitize_preprocessors"].default()
    ]
    config.Autograde.autograde_preprocessors = [
        JudgedExecute if p is Execute else p for p in defaults["autograde_preprocessors"].default()
    ]
    # Kernels talk over Unix sockets in this worker's folder: parallel kernels on TCP race for ports
    # ("Address already in use"), and one worker runs one kernel at a time.
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = str(root / "kernel")
    config.JudgedExecute.cell_timeout = settings.cell_timeout
    config.JudgedExecute.notebook_timeout = settings.notebook_timeout
    config.JudgedExecute.memory_mb = settings.memory_mb
    config.JudgedExecute.zygote = list(_WORKER["zygote"].address)
    config.JudgedExecute.kernel_manager_class = ZygoteKernelManager
    config.ZygoteKernelManager.zygote = _WORKER["kernel_zygote"].address
    return _nbgrader_api(root, config).autograde(settings.chapter, student, force=True, create=True)


def _read_gradebook(root, settings, student, result):
    from nbgrader.api import Gradebook, MissingEntry

    chapter = settings.chapter
    with Gradebook("sqlite:///" + str(root / "course" / "gradebook.db")) as gradebook:
        try:
            notebook = gradebook.find_submission_notebook(chapter, chapter, student)
            submission = gradebook.find_submission(chapter, student)
        except MissingEntry:
            result.attention.append("not in the gradebook after autograde: scored zero")
            return
        result.timestamp = submission.timestamp.isoformat() if submission.timestamp else None
        result.late_penalty = notebook.late_submission_penalty
        written = {cell.name for cell in notebook.notebook.solution_cells}
        for grade in notebook.grades:
            score = grade.auto_score
            if grade.name in written:
                result.cells[grade.name] = CellScore(grade.name, score, float(grade.max_score), manual=True)
                if grade.needs_manual_grade:
                    result.attention.append(f"{grade.name}: a written answer, to grade by hand")
                continue
            if score is None:
                result.attention.append(f"{grade.name}: nbgrader left it for manual grading; scored zero")
                score = 0.0
            result.cells[grade.name] = CellScore(grade.name, float(score), float(grade.max_score))
        result.comments = {c.name: c.auto_comment for c in notebook.comments}


def _read_notebook(path, result):
    nb = nbformat.read(str(path), as_version=4)
    tests = grade_cells(nb)
    order = {name: i for i, name in enumerate(tests)}
    result.cells = dict(sorted(result.cells.items(), key=lambda item: order.get(item[0], len(order))))
    for name, cell in tests.items():
        if name in result.cells:
            result.cells[name].error = cell_error(cell)
    result.attention += _attention(nb.metadata.get(ATTENTION_KEY, {}))
    result.seconds = execution_seconds(nb)


def _attention(report):
    lines = []
    if report.get("kernel"):
        lines.append(f"kernel: {report['kernel']}")
    for event in report.get("events", []):
        lines.append(event)
    if report.get("dead"):
        lines.append(f"sandbox gone: {report['dead']}")
    if report.get("restored"):
        lines.append(f"locked cells deleted by the student, restored: {', '.join(report['restored'])}")
    if report.get("restored_tests"):
        lines.append(f"test cells deleted by the student, restored and graded: {', '.join(report['restored_tests'])}")
    if report.get("missing_answers"):
        lines.append(f"answer cells missing: {', '.join(report['missing_answers'])}")
    if report.get("not_run"):
        because = f" ({report['not_run_because']})" if report.get("not_run_because") else ""
        lines.append(f"not run (scored zero){because}: {', '.join(report['not_run'])}")
    return lines


def _last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "unknown error"


# --------------------------------------------------------------------------- the class, in the parent
def prepare(settings, scratch):
    """A template course in `scratch` with the chapter generated into its own gradebook (each
    worker grades into a copy), and the course's gradebook told the chapter's cells (which the
    grades are merged into). Returns the template's root."""
    from traitlets.config import Config

    chapter = settings.chapter
    _alembic_head_in_process()
    template = NbgraderCourse.scratch(Path(scratch) / "template", [chapter], _course(settings))
    registrar = NbgraderCourse.scratch(Path(scratch) / "registrar", [chapter], _course(settings))
    _create_gradebook(settings.gradebook, _nbgrader_api(template.root).coursedir.course_id)
    # Both in this process, one after the other: nbgrader's CLI in a process of its own cost 1.6
    # CPU-s to start for the 0.2 the registration itself takes (benchmarks/README.md).
    into_course = Config()
    into_course.CourseDirectory.db_url = settings.gradebook
    for course, config in [(registrar, into_course), (template, None)]:
        outcome = _nbgrader_api(course.root, config).generate_assignment(chapter, force=True, create=True)
        if not outcome["success"]:
            raise PipelineError(f"nbgrader generate_assignment {chapter} failed:\n{outcome.get('error') or outcome.get('log')}")
    shutil.rmtree(template.root / "notebooks", ignore_errors=True)
    return template.root


def _alembic_head_in_process():
    """nbgrader stamps each new gradebook with its schema's head revision, which it asks of the
    `alembic` script: a new Python each time (about 1.5 CPU-seconds, two per class). Alembic's own
    API reads the same head from nbgrader's migrations here, once."""
    import functools

    import nbgrader
    import nbgrader.api
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    if not hasattr(nbgrader.api.get_alembic_version, "cache_info"):
        config = Config()
        config.set_main_option("script_location", str(Path(nbgrader.__file__).parent / "alembic"))
        nbgrader.api.get_alembic_version = functools.cache(lambda: ScriptDirectory.from_config(config).get_current_head())


def _create_gradebook(url, course_id):
    """Make the gradebook's tables and its course rows here, before any nbgrader process opens
    it: two chapters graded at once into an empty PostgreSQL database would otherwise both create
    them and collide. The rows are the course's own (`course_id`, from nbgrader_config.py) and
    nbgrader's "default_course", which its preprocessors open the gradebook as whatever the
    configuration says; once both exist, no later opener inserts anything."""
    import time

    import sqlalchemy.exc
    from nbgrader.api import Gradebook, InvalidEntry

    # nbgrader creates the tables with the `alembic` script it finds on PATH (as the course's
    # nbgrader_config.py says): the one beside this Python, even when its folder is not on PATH
    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    for attempt in range(1, 6):
        try:
            for course in (course_id, "default_course"):
                Gradebook(url, course).close()
            return
        # another run is creating the same tables or rows at this moment (nbgrader reports a
        # row's collision as its own InvalidEntry): a later attempt finds them made
        except (sqlalchemy.exc.DBAPIError, InvalidEntry):
            if attempt == 5:
                raise
            time.sleep(0.5 * attempt)


def _course(settings):
    root = Path(settings.root)
    return Course(root, root / "tests" / "chapters")


def grade_class(settings, submissions, progress=None):
    """Autograde {student: folder}; returns {student: StudentResult}, merged into the gradebook.

    `progress(result)` is called in the parent as each submission finishes (a progress bar).
    """
    results = {}
    bad = [s for s in submissions if not valid_student_id(s)]
    for student in bad:
        results[student] = StudentResult(student, attention=[f"unusable student id {student!r}: not graded"])
    todo = {s: f for s, f in submissions.items() if s not in bad}
    target = Path(settings.root) / "course" / "autograded"
    refuse_unsafe_grading()
    with tempfile.TemporaryDirectory(prefix="minigrad-autograde-") as scratch, _pool(settings) as pool:
        scratch = Path(scratch)
        template = prepare(settings, scratch)
        staged = scratch / "autograded"  # moved into the course only once the preflight has passed

        def task(student, folder):
            return grade_submission, (template, settings, student, folder, staged / student / settings.chapter)

        def finish(student, result, error):
            if student == PREFLIGHT:  # first in line: a chapter that cannot be judged stops everything
                check_judgeable(settings, result, error)
                return
            if error is not None:
                result = StudentResult(student, attention=[f"grading failed: {type(error).__name__}: {error}"])
            results[student] = result
            if progress:
                progress(result)

        tasks = {PREFLIGHT: task(PREFLIGHT, preflight_submission(settings, scratch)),
                 **{s: task(s, todo[s]) for s in todo}}
        suspects = []  # running when a worker crashed: which of them crashed it is not known yet
        for student, result, error in pool.run(tasks):
            if isinstance(error, concurrent.futures.process.BrokenProcessPool):
                suspects.append(student)
            elif isinstance(error, WorkerLost):  # the cluster already tried it on another worker
                finish(student, StudentResult(student, attention=[f"the grading worker died twice on it: {error}"]), None)
            else:
                finish(student, result, error)
        for student in suspects:  # alone in a fresh worker, a crash is this submission's own
            for attempt in (1, 2):
                with _Pool(1) as alone:
                    [(_, result, error)] = list(alone.run({student: tasks[student]}))
                if not isinstance(error, concurrent.futures.process.BrokenProcessPool):
                    break
            else:
                result, error = StudentResult(student, attention=["the grading worker crashed twice on it"]), None
            finish(student, result, error)
        for student in results:
            if (staged / student / settings.chapter).is_dir():
                shutil.rmtree(target / student / settings.chapter, ignore_errors=True)
                (target / student).mkdir(parents=True, exist_ok=True)
                shutil.move(staged / student / settings.chapter, target / student / settings.chapter)
    merge_into_gradebook(settings, results)
    return results


def _pool(settings):
    """Where submissions are graded: a Dask cluster (course.cluster) or worker processes here."""
    if settings.cluster:
        from .cluster import DaskPool

        return DaskPool(settings.cluster)
    return _Pool(settings.workers)


def refuse_unsafe_grading():
    """Grading refuses, loudly, where the sandbox would be weaker than the guide promises: no
    Landlock (Linux before 5.13), or not root (no uid of its own, so nothing keeps it from
    signalling the grader) on a kernel without Landlock's signal scoping."""
    from . import landlock

    version = landlock.abi()
    if version < 1:
        raise PipelineError("this kernel has no Landlock (Linux 5.13 or newer): a student's code could read the "
                            "course's solutions and gradebook; refusing to grade")
    if os.geteuid() != 0 and version < 6:
        raise PipelineError(f"grading as a user other than root needs Landlock ABI 6 (this kernel has {version}) "
                            "so that a student's code cannot signal the grader; run as root, or on Linux 6.12+")


def preflight_submission(settings, scratch):
    """The chapter's own solution (its nbgrader cells), graded first in the class as PREFLIGHT."""
    source = Path(settings.root) / "solutions" / settings.chapter / f"{settings.chapter}.ipynb"
    folder = scratch / "preflight" / settings.chapter
    folder.mkdir(parents=True)
    nbformat.write(trimmed_notebook(read_notebook(source)), str(folder / f"{settings.chapter}.ipynb"))
    return folder


def check_judgeable(settings, result, error):
    """The chapter's own solution must score full marks through the judge: a chapter that cannot be
    judged is refused, never graded another way. It is graded beside the class (the first task, so a
    refusal comes early) and nothing reaches the course's gradebook or folders before it passed."""
    lost = [f"{c.name} ({c.error or f'{c.score:g}/{c.max_score:g}'})" for c in (result.cells.values() if result else [])
            if not c.manual and (c.score or 0) < c.max_score]
    if error is not None or not result.cells or lost:
        why = f"{type(error).__name__}: {error}" if error is not None else \
            ("; ".join(lost) if lost else "; ".join(result.attention) or "no graded cells")
        raise PipelineError(f"{settings.chapter} cannot be graded safely: its own solution does not score full marks "
                            f"through the judge ({why}); nothing was graded or written")


PREFLIGHT = "solution-preflight"


class _Pool:
    """Worker processes that outlive one batch (each keeps its scratch course and zygote), and are
    replaced if one crashes."""

    def __init__(self, workers):
        self.workers = max(1, workers)
        self.executor = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.executor is not None:
            self.executor.shutdown()

    def run(self, tasks):
        """Yield (name, result, exception) as the tasks {name: (function, args)} finish. At most one
        task per worker is handed out at a time, so a crashed worker takes down only the tasks that
        were running (BrokenProcessPool), never the ones still waiting; the pool is then replaced."""
        pending, running = list(tasks.items()), {}
        while pending or running:
            if self.executor is None:
                self.executor = concurrent.futures.ProcessPoolExecutor(max_workers=self.workers)
            while pending and len(running) < self.workers:
                name, (function, args) = pending.pop(0)
                running[self.executor.submit(function, *args)] = name
            done, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            broken = False
            for future in done:
                name = running.pop(future)
                try:
                    yield name, future.result(), None
                except Exception as error:  # noqa: BLE001 - reported per task by the caller
                    broken |= isinstance(error, concurrent.futures.process.BrokenProcessPool)
                    yield name, None, error
            if broken:
                for future, name in running.items():
                    yield name, None, concurrent.futures.process.BrokenProcessPool("the grading worker crashed")
                running = {}
                self.executor.shutdown(wait=False, cancel_futures=True)
                self.executor = None


def merge_into_gradebook(settings, results):
    """Write each result into the course's gradebook, from this (the parent) process only."""
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    chapter = settings.chapter
    with Gradebook(settings.gradebook) as gradebook, warnings.catch_warnings():
        # nbgrader's own update_or_create_submission trips SQLAlchemy's autoflush warnings when it
        # creates a student's first submission; the rows it writes are complete (checked by the tests).
        warnings.simplefilter("ignore", SAWarning)
        for student, result in results.items():
            if not valid_student_id(student):
                continue
            gradebook.update_or_create_student(student)
            stamp = {"timestamp": datetime.datetime.fromisoformat(result.timestamp)} if result.timestamp else {}
            gradebook.update_or_create_submission(chapter, student, **stamp)
            notebook = gradebook.find_submission_notebook(chapter, chapter, student)
            for grade in notebook.grades:
                cell = result.cells.get(grade.name)
                if cell is None:
                    result.cells[grade.name] = cell = CellScore(grade.name, 0.0, float(grade.max_score))
                grade.auto_score = cell.score
                # A written answer waits for a person; an autograded cell only if a person already
                # overrode it (as nbgrader's SaveAutoGrades decides).
                grade.needs_manual_grade = (cell.manual and cell.score is None) or grade.manual_score is not None
            for comment in notebook.comments:
                if comment.name in result.comments:
                    comment.auto_comment = result.comments[comment.name]
            if result.late_penalty is not None:
                notebook.late_submission_penalty = result.late_penalty
            gradebook.db.commit()
