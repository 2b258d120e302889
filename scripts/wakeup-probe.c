// Wake-up probe for the open mixed-load stall (README "Limits"): thread A sleeps in epoll_wait
// (timeout 3 s) on an eventfd; thread B sleeps a random 0-2 ms, then writes the eventfd; CPUs are
// mostly idle. With arg2=1 a thread also forks+execs `sh -c "exit 7"` in a loop like child_process.
// Build: cc -O2 -pthread scripts/wakeup-probe.c -o /tmp/probe && /tmp/probe 150 1
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static int efd, ep; static volatile double sent_at;
static void *writer(void*p){ for(;;){ usleep(rand()%2000); sent_at=now(); uint64_t one=1; write(efd,&one,8); usleep(3000);} }
static void *forker(void*p){ for(;;){ pid_t pid=fork(); if(pid==0){ execl("/bin/sh","sh","-c","exit 7",(char*)0); _exit(1);} waitpid(pid,0,0);} }
int main(int argc,char**argv){ int secs=atoi(argv[1]); int fork_on=atoi(argv[2]);
  efd=eventfd(0,EFD_NONBLOCK); ep=epoll_create1(0); struct epoll_event e={.events=EPOLLIN,.data.fd=efd}; epoll_ctl(ep,EPOLL_CTL_ADD,efd,&e);
  pthread_t t; pthread_create(&t,0,writer,0); if(fork_on) pthread_create(&t,0,forker,0);
  double end=now()+secs, worst=0; long n=0, slow=0;
  while(now()<end){ struct epoll_event ev; int r=epoll_wait(ep,&ev,1,3000); double got=now(); if(r==1){ uint64_t v; read(efd,&v,8); double l=got-sent_at; if(l>worst) worst=l; if(l>0.5){ slow++; fprintf(stderr,"SLOW wake %.3fs\n",l);} n++; } else if(r==0){ fprintf(stderr,"TIMEOUT: eventfd written %.3fs ago but epoll_wait slept 3 s\n", got-sent_at); slow++; } }
  printf("wakeups %ld worst %.4fs slow %ld\n",n,worst,slow); return 0; }
