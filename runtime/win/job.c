/*
 * job.c - the Job Object's settings, creation and drain (job.h).
 */
#include "job.h"

#include <stdio.h>
#include <string.h>

#include "../../emitters/winjob.h"

#define PORT_KEY 1

_Static_assert(WINJOB_LIMIT_KILL_ON_JOB_CLOSE == JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, "flag");
_Static_assert(WINJOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION ==
		   JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION,
	       "flag");
_Static_assert(WINJOB_LIMIT_ACTIVE_PROCESS == JOB_OBJECT_LIMIT_ACTIVE_PROCESS, "flag");
_Static_assert(WINJOB_LIMIT_JOB_MEMORY == JOB_OBJECT_LIMIT_JOB_MEMORY, "flag");
_Static_assert(WINJOB_LIMIT_JOB_TIME == JOB_OBJECT_LIMIT_JOB_TIME, "flag");
_Static_assert(WINJOB_UI_HANDLES == JOB_OBJECT_UILIMIT_HANDLES, "flag");
_Static_assert(WINJOB_UI_READCLIPBOARD == JOB_OBJECT_UILIMIT_READCLIPBOARD, "flag");
_Static_assert(WINJOB_UI_WRITECLIPBOARD == JOB_OBJECT_UILIMIT_WRITECLIPBOARD, "flag");
_Static_assert(WINJOB_UI_SYSTEMPARAMETERS == JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS, "flag");
_Static_assert(WINJOB_UI_DISPLAYSETTINGS == JOB_OBJECT_UILIMIT_DISPLAYSETTINGS, "flag");
_Static_assert(WINJOB_UI_GLOBALATOMS == JOB_OBJECT_UILIMIT_GLOBALATOMS, "flag");
_Static_assert(WINJOB_UI_DESKTOP == JOB_OBJECT_UILIMIT_DESKTOP, "flag");
_Static_assert(WINJOB_UI_EXITWINDOWS == JOB_OBJECT_UILIMIT_EXITWINDOWS, "flag");
_Static_assert(WINJOB_CPU_ENABLE == JOB_OBJECT_CPU_RATE_CONTROL_ENABLE, "flag");
_Static_assert(WINJOB_CPU_HARD_CAP == JOB_OBJECT_CPU_RATE_CONTROL_HARD_CAP, "flag");

void
job_settings_build(const struct manifest *m, struct job_settings *s)
{
	JOBOBJECT_BASIC_LIMIT_INFORMATION *b = &s->ext.BasicLimitInformation;

	memset(s, 0, sizeof(*s));
	/*
	 * No BREAKAWAY_OK or SILENT_BREAKAWAY_OK: a process in the job cannot
	 * start one outside it (the manifest has no way to ask for either).
	 */
	b->LimitFlags = m->limit_flags;
	b->ActiveProcessLimit = m->active_process_limit;
	b->PerJobUserTimeLimit.QuadPart = (LONGLONG)m->per_job_user_time_limit;
	s->ext.JobMemoryLimit = (SIZE_T)m->job_memory_limit;
	s->ui.UIRestrictionsClass = m->ui_restrictions;
	if (m->cpu_rate_control_flags) {
		s->has_cpu = true;
		s->cpu.ControlFlags = m->cpu_rate_control_flags;
		s->cpu.CpuRate = m->cpu_rate;
	}
}

void
job_settings_print(const struct job_settings *s)
{
	const JOBOBJECT_BASIC_LIMIT_INFORMATION *b = &s->ext.BasicLimitInformation;
	const IO_COUNTERS *io = &s->ext.IoInfo;
	char flags[256];

	printf("SetInformationJobObject JobObjectExtendedLimitInformation\n");
	printf("BasicLimitInformation.PerProcessUserTimeLimit = %lld\n",
	       (long long)b->PerProcessUserTimeLimit.QuadPart);
	printf("BasicLimitInformation.PerJobUserTimeLimit = %lld\n",
	       (long long)b->PerJobUserTimeLimit.QuadPart);
	printf("BasicLimitInformation.LimitFlags = 0x%08lx %s\n", (unsigned long)b->LimitFlags,
	       manifest_flags_text(MANIFEST_LIMIT_FLAGS, b->LimitFlags, flags, sizeof(flags)));
	printf("BasicLimitInformation.MinimumWorkingSetSize = %llu\n",
	       (unsigned long long)b->MinimumWorkingSetSize);
	printf("BasicLimitInformation.MaximumWorkingSetSize = %llu\n",
	       (unsigned long long)b->MaximumWorkingSetSize);
	printf("BasicLimitInformation.ActiveProcessLimit = %lu\n",
	       (unsigned long)b->ActiveProcessLimit);
	printf("BasicLimitInformation.Affinity = %llu\n", (unsigned long long)b->Affinity);
	printf("BasicLimitInformation.PriorityClass = %lu\n", (unsigned long)b->PriorityClass);
	printf("BasicLimitInformation.SchedulingClass = %lu\n", (unsigned long)b->SchedulingClass);
	printf("IoInfo.ReadOperationCount = %llu\n", (unsigned long long)io->ReadOperationCount);
	printf("IoInfo.WriteOperationCount = %llu\n", (unsigned long long)io->WriteOperationCount);
	printf("IoInfo.OtherOperationCount = %llu\n", (unsigned long long)io->OtherOperationCount);
	printf("IoInfo.ReadTransferCount = %llu\n", (unsigned long long)io->ReadTransferCount);
	printf("IoInfo.WriteTransferCount = %llu\n", (unsigned long long)io->WriteTransferCount);
	printf("IoInfo.OtherTransferCount = %llu\n", (unsigned long long)io->OtherTransferCount);
	printf("ProcessMemoryLimit = %llu\n", (unsigned long long)s->ext.ProcessMemoryLimit);
	printf("JobMemoryLimit = %llu\n", (unsigned long long)s->ext.JobMemoryLimit);
	printf("PeakProcessMemoryUsed = %llu\n", (unsigned long long)s->ext.PeakProcessMemoryUsed);
	printf("PeakJobMemoryUsed = %llu\n", (unsigned long long)s->ext.PeakJobMemoryUsed);
	printf("SetInformationJobObject JobObjectBasicUIRestrictions\n");
	printf("UIRestrictionsClass = 0x%08lx %s\n", (unsigned long)s->ui.UIRestrictionsClass,
	       manifest_flags_text(MANIFEST_UI_RESTRICTIONS, s->ui.UIRestrictionsClass, flags,
				   sizeof(flags)));
	if (s->has_cpu) {
		printf("SetInformationJobObject JobObjectCpuRateControlInformation\n");
		printf("ControlFlags = 0x%08lx %s\n", (unsigned long)s->cpu.ControlFlags,
		       manifest_flags_text(MANIFEST_CPU_FLAGS, s->cpu.ControlFlags, flags,
					   sizeof(flags)));
		printf("CpuRate = %lu\n", (unsigned long)s->cpu.CpuRate);
	}
	printf("SetInformationJobObject JobObjectAssociateCompletionPortInformation\n");
	printf("CompletionKey = %d\n", PORT_KEY);
	printf("CompletionPort = (a new I/O completion port of this launch)\n");
}

static int
set_info(HANDLE job, JOBOBJECTINFOCLASS cls, const char *name, void *info, DWORD size,
	 struct win_err *e)
{
	if (!SetInformationJobObject(job, cls, info, size))
		return win_fail(e, "SetInformationJobObject(%s): %s", name,
				win_strerror(GetLastError()));
	return 0;
}

/* Step 2 of the launch: every limit set before any process exists to escape them. */
int
job_create(const struct job_settings *s, HANDLE *job, HANDLE *port, struct win_err *e)
{
	struct job_settings c = *s; /* SetInformationJobObject takes its input as writable */
	JOBOBJECT_ASSOCIATE_COMPLETION_PORT acp;

	/* Unnamed and not inheritable: this process holds the only handle. */
	*job = CreateJobObjectW(NULL, NULL);
	if (!*job)
		return win_fail(e, "CreateJobObject: %s", win_strerror(GetLastError()));
	if (set_info(*job, JobObjectExtendedLimitInformation, "JobObjectExtendedLimitInformation",
		     &c.ext, sizeof(c.ext), e) < 0 ||
	    set_info(*job, JobObjectBasicUIRestrictions, "JobObjectBasicUIRestrictions", &c.ui,
		     sizeof(c.ui), e) < 0)
		return -1;
	if (c.has_cpu &&
	    set_info(*job, JobObjectCpuRateControlInformation, "JobObjectCpuRateControlInformation",
		     &c.cpu, sizeof(c.cpu), e) < 0)
		return -1;
	/* The port reports when the last process of the job is gone. */
	*port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
	if (!*port)
		return win_fail(e, "CreateIoCompletionPort: %s", win_strerror(GetLastError()));
	acp.CompletionKey = (PVOID)(ULONG_PTR)PORT_KEY;
	acp.CompletionPort = *port;
	return set_info(*job, JobObjectAssociateCompletionPortInformation,
			"JobObjectAssociateCompletionPortInformation", &acp, sizeof(acp), e);
}

int
job_drain(HANDLE port)
{
	ULONGLONG deadline = GetTickCount64() + JOB_DRAIN_MS;

	for (;;) {
		ULONGLONG now = GetTickCount64();
		DWORD msg;
		ULONG_PTR key;
		LPOVERLAPPED ov;

		if (now >= deadline ||
		    !GetQueuedCompletionStatus(port, &msg, &key, &ov, (DWORD)(deadline - now)))
			return -1;
		if (key == PORT_KEY && msg == JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO)
			return 0;
	}
}
