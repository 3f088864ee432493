// SPDX-License-Identifier: GPL-2.0
/*
 * cryptoshim - create and pin pcrypt(...) AEAD instances at load time
 *
 * Creating a pcrypt instance from user space takes CAP_NET_ADMIN
 * (crypto_user's CRYPTO_MSG_NEWALG). This module creates the instances
 * named in its "algs" parameter, holds a transform on each so that it
 * stays registered and pcrypt stays loaded, and publishes what an
 * unprivileged AF_ALG user needs to bind it:
 *
 *   /sys/kernel/cryptoshim/count
 *   /sys/kernel/cryptoshim/instances/<i>/{alg,name,driver,priority,cpumask_dir}
 *
 * pcrypt registers an instance under the inner algorithm's cra_name and
 * the driver name "pcrypt(<inner driver>)", so it is bound by driver name.
 *
 * On unload the transforms are freed and the instances this module
 * registered itself are unregistered; instances that existed before it
 * loaded are left alone.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/aead.h>
#include <crypto/algapi.h>
#include <crypto/internal/aead.h>
#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#define CRYPTOSHIM_MAX_INSTANCES	16
#define CRYPTOSHIM_PREFIX		"pcrypt("
/* strlen("pcrypt()") */
#define CRYPTOSHIM_WRAP_LEN		8

/*
 * pcrypt's padata instances live in a kset of its own, "pcrypt" under
 * /sys/kernel: pencrypt for encryption, pdecrypt (its sibling) for
 * decryption, each with parallel_cpumask and serial_cpumask (crypto/pcrypt.c,
 * pcrypt_init_padata(); kernel/padata.c). Every pcrypt instance shares
 * them; the pointers are private to pcrypt, so the path is stated here and
 * checked by the VM tests.
 */
#define CRYPTOSHIM_CPUMASK_DIR		"/sys/kernel/pcrypt/pencrypt"

static char *algs = "gcm(aes)";
module_param(algs, charp, 0444);
MODULE_PARM_DESC(algs,
		 "Comma-separated AEAD algorithm names to wrap in pcrypt (default gcm(aes))");

struct cryptoshim_inst {
	struct kobject kobj;
	/* Pins the instance (and the pcrypt and inner modules). */
	struct crypto_aead *tfm;
	/* The instance, if this module registered it; else NULL. */
	struct crypto_instance *owned;
	char alg[CRYPTO_MAX_ALG_NAME];
	char name[CRYPTO_MAX_ALG_NAME];
	char driver[CRYPTO_MAX_ALG_NAME];
	int priority;
};

static struct kobject *shim_kobj;
static struct kobject *instances_kobj;
static struct cryptoshim_inst *insts[CRYPTOSHIM_MAX_INSTANCES];
static unsigned int ninsts;

/* ---------------------------------------------------------------- sysfs */

#define to_inst(k) container_of(k, struct cryptoshim_inst, kobj)

static ssize_t alg_show(struct kobject *kobj, struct kobj_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%s\n", to_inst(kobj)->alg);
}

static ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", to_inst(kobj)->name);
}

static ssize_t driver_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", to_inst(kobj)->driver);
}

static ssize_t priority_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", to_inst(kobj)->priority);
}

static ssize_t cpumask_dir_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", CRYPTOSHIM_CPUMASK_DIR);
}

static struct kobj_attribute alg_attr = __ATTR_RO(alg);
static struct kobj_attribute name_attr = __ATTR_RO(name);
static struct kobj_attribute driver_attr = __ATTR_RO(driver);
static struct kobj_attribute priority_attr = __ATTR_RO(priority);
static struct kobj_attribute cpumask_dir_attr = __ATTR_RO(cpumask_dir);

static struct attribute *cryptoshim_inst_attrs[] = {
	&alg_attr.attr,
	&name_attr.attr,
	&driver_attr.attr,
	&priority_attr.attr,
	&cpumask_dir_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(cryptoshim_inst);

/* The strings shown above are copies: a reader never touches the tfm. */
static void cryptoshim_inst_release(struct kobject *kobj)
{
	kfree(to_inst(kobj));
}

static struct kobj_type cryptoshim_inst_ktype = {
	.release = cryptoshim_inst_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = cryptoshim_inst_groups,
};

static ssize_t count_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%u\n", ninsts);
}

static struct kobj_attribute count_attr = __ATTR_RO(count);

/* ------------------------------------------------------- the parameter */

static bool cryptoshim_name_char_ok(char c)
{
	return isalnum(c) || c == '(' || c == ')' || c == ',' || c == '-' ||
	       c == '_';
}

/*
 * Split @list at the commas outside parentheses ("authenc(hmac(sha1),
 * cbc(aes))" is one name) into @names. Returns the number of names or
 * -EINVAL for a malformed list: empty entries, unbalanced parentheses,
 * odd characters, names too long to wrap, or too many names.
 */
static int cryptoshim_split(const char *list,
			    char names[][CRYPTO_MAX_ALG_NAME])
{
	const size_t max = CRYPTO_MAX_ALG_NAME - CRYPTOSHIM_WRAP_LEN;
	const char *start = list, *p;
	int depth = 0, n = 0;

	for (p = list;; p++) {
		size_t len = p - start;

		if (*p && *p != ',') {
			if (!cryptoshim_name_char_ok(*p)) {
				pr_err("algs: bad character 0x%02x\n",
				       (unsigned char)*p);
				return -EINVAL;
			}
			if (*p == '(')
				depth++;
			if (*p == ')' && --depth < 0)
				break;
			continue;
		}
		if (*p == ',' && depth > 0)
			continue;
		if (depth != 0 || len == 0) {
			pr_err("algs: empty or unbalanced entry at offset %zu\n",
			       (size_t)(start - list));
			return -EINVAL;
		}
		if (len >= max) {
			pr_err("algs: entry at offset %zu longer than %zu\n",
			       (size_t)(start - list), max - 1);
			return -EINVAL;
		}
		if (n == CRYPTOSHIM_MAX_INSTANCES) {
			pr_err("algs: more than %d entries\n",
			       CRYPTOSHIM_MAX_INSTANCES);
			return -EINVAL;
		}
		memcpy(names[n], start, len);
		names[n][len] = '\0';
		n++;
		if (!*p)
			return n;
		start = p + 1;
	}
	pr_err("algs: unbalanced ')' at offset %zu\n", (size_t)(p - list));
	return -EINVAL;
}

/* ------------------------------------------------------ instantiation */

/*
 * Tells whether an algorithm with driver name @driver got registered while
 * the watch was on. The crypto manager's own notifier stops the chain on
 * CRYPTO_MSG_ALG_REGISTER, so this one must run first.
 */
struct cryptoshim_watch {
	struct notifier_block nb;
	const char *driver;
	bool seen;
};

static int cryptoshim_notify(struct notifier_block *nb, unsigned long msg,
			     void *data)
{
	struct cryptoshim_watch *w = container_of(nb, struct cryptoshim_watch,
						  nb);
	struct crypto_alg *alg = data;

	if (msg == CRYPTO_MSG_ALG_REGISTER &&
	    !strcmp(alg->cra_driver_name, w->driver))
		WRITE_ONCE(w->seen, true);
	return NOTIFY_DONE;
}

/*
 * Allocate pcrypt(<driver of the best implementation of @alg>) and fill
 * @inst. Returns 0 or -errno; on failure nothing is left allocated, though
 * the crypto API may have instantiated templates on the way (those stay,
 * as after any lookup).
 */
static int cryptoshim_instantiate(struct cryptoshim_inst *inst,
				  const char *alg)
{
	struct cryptoshim_watch w = {
		.nb = { .notifier_call = cryptoshim_notify, .priority = 1 },
	};
	struct crypto_aead *inner, *tfm;
	const char *drv;
	int err;

	strscpy(inst->alg, alg, sizeof(inst->alg));
	snprintf(inst->name, sizeof(inst->name), "pcrypt(%s)", alg);

	inner = crypto_alloc_aead(alg, 0, 0);
	if (IS_ERR(inner)) {
		pr_warn("%s: no such AEAD (%pe; pcrypt wraps AEADs only), skipped\n",
			alg, inner);
		return PTR_ERR(inner);
	}
	drv = crypto_aead_driver_name(inner);
	if (!strncmp(drv, CRYPTOSHIM_PREFIX, strlen(CRYPTOSHIM_PREFIX))) {
		/* The best one is a pcrypt instance already: pin it. */
		tfm = inner;
		goto found;
	}
	if (snprintf(inst->driver, sizeof(inst->driver), "pcrypt(%s)", drv) >=
	    sizeof(inst->driver)) {
		pr_warn("%s: driver name pcrypt(%s) too long, skipped\n", alg,
			drv);
		crypto_free_aead(inner);
		return -ENAMETOOLONG;
	}

	/* inner stays allocated so that its module stays loaded meanwhile */
	w.driver = inst->driver;
	err = crypto_register_notifier(&w.nb);
	if (err) {
		crypto_free_aead(inner);
		return err;
	}
	/*
	 * No module provides "pcrypt(<driver>)": CRYPTO_NOLOAD spares the two
	 * futile modprobe runs for that name. The template itself ("crypto-
	 * pcrypt") is still loaded on demand.
	 */
	tfm = crypto_alloc_aead(inst->driver, 0, CRYPTO_NOLOAD);
	crypto_unregister_notifier(&w.nb);
	crypto_free_aead(inner);
	if (IS_ERR(tfm)) {
		pr_warn("%s: cannot instantiate %s (%pe), skipped\n", alg,
			inst->driver, tfm);
		return PTR_ERR(tfm);
	}
	if (READ_ONCE(w.seen))
		inst->owned = aead_crypto_instance(aead_alg_instance(tfm));
found:
	inst->tfm = tfm;
	strscpy(inst->driver, crypto_aead_driver_name(tfm),
		sizeof(inst->driver));
	inst->priority = crypto_tfm_alg_priority(crypto_aead_tfm(tfm));
	pr_info("%s: %s, priority %d%s\n", alg, inst->driver, inst->priority,
		inst->owned ? "" : " (existed already)");
	return 0;
}

/* Unregister first, while the tfm still pins the instance: see README. */
static void cryptoshim_release(struct cryptoshim_inst *inst)
{
	if (inst->owned)
		crypto_unregister_instance(inst->owned);
	inst->owned = NULL;
	crypto_free_aead(inst->tfm);
	inst->tfm = NULL;
}

static void cryptoshim_teardown(void)
{
	unsigned int i;

	/* count goes first: a reader who sees it sees every instance */
	if (shim_kobj)
		sysfs_remove_file(shim_kobj, &count_attr.attr);
	for (i = ninsts; i-- > 0;) {
		cryptoshim_release(insts[i]);
		kobject_put(&insts[i]->kobj);
		insts[i] = NULL;
	}
	ninsts = 0;
	kobject_put(instances_kobj);
	instances_kobj = NULL;
	kobject_put(shim_kobj);
	shim_kobj = NULL;
}

static int cryptoshim_add(const char *alg)
{
	struct cryptoshim_inst *inst;
	int err;

	inst = kzalloc(sizeof(*inst), GFP_KERNEL);
	if (!inst)
		return -ENOMEM;
	err = cryptoshim_instantiate(inst, alg);
	if (err) {
		kfree(inst);
		return 0;	/* skipped, already logged */
	}
	kobject_init(&inst->kobj, &cryptoshim_inst_ktype);
	err = kobject_add(&inst->kobj, instances_kobj, "%u", ninsts);
	if (err) {
		cryptoshim_release(inst);
		kobject_put(&inst->kobj);
		return err;
	}
	insts[ninsts++] = inst;
	return 0;
}

static int __init cryptoshim_init(void)
{
	char (*names)[CRYPTO_MAX_ALG_NAME];
	int n, i, err;

	names = kcalloc(CRYPTOSHIM_MAX_INSTANCES, sizeof(*names), GFP_KERNEL);
	if (!names)
		return -ENOMEM;
	n = cryptoshim_split(algs ? algs : "", names);
	if (n < 0) {
		err = n;
		goto out_free_names;
	}

	err = -ENOMEM;
	shim_kobj = kobject_create_and_add("cryptoshim", kernel_kobj);
	if (!shim_kobj)
		goto out_free_names;
	instances_kobj = kobject_create_and_add("instances", shim_kobj);
	if (!instances_kobj)
		goto out_teardown;

	for (i = 0; i < n; i++) {
		err = cryptoshim_add(names[i]);
		if (err)
			goto out_teardown;
	}
	if (!ninsts) {
		pr_err("none of algs=%s could be instantiated\n", algs);
		err = -ENOENT;
		goto out_teardown;
	}
	err = sysfs_create_file(shim_kobj, &count_attr.attr);
	if (err)
		goto out_teardown;
	kfree(names);
	return 0;

out_teardown:
	cryptoshim_teardown();
out_free_names:
	kfree(names);
	return err;
}

static void __exit cryptoshim_exit(void)
{
	cryptoshim_teardown();
}

module_init(cryptoshim_init);
module_exit(cryptoshim_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Create and pin pcrypt AEAD instances for unprivileged AF_ALG users");
MODULE_AUTHOR("cryptod developers");
