package dev.commplan.release;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.annotation.Annotation;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleDescriptor.Requires;
import java.lang.module.ModuleReader;
import java.lang.module.ModuleReference;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The public surface of one Java module, as text: what its unqualified exports let other code name and
 * call. One block for the module (its exports and {@code requires transitive}), then one block per type
 * that code outside can name (public, or a protected member type of a class it can extend), its members
 * indented under it: enum constants, fields, constructors, methods and annotation elements that are
 * public, or protected in a class that can be subclassed. Types print with their documented annotations
 * ({@code @Retention}, {@code @Target}, {@code @Deprecated}, ...), modifiers, type parameters and supertypes;
 * members with their modifiers, generic types, parameters, thrown types and annotation defaults.
 *
 * <p>What a user sees is what counts, not how the module is built: a public class that extends a
 * package-private one shows that class's public methods as its own and its nearest public superclass as
 * its superclass, and a sealed type lists the public types it permits, through any package-private ones.
 * Lines are sorted (types by name; members by kind, name, text), so the text changes only when the
 * surface does. Classes are loaded without being initialized. Constant fields' values are not shown.
 */
final class ApiSurface {
  private ApiSurface() {}

  /** The surface of the module {@code reference}, its classes loaded through {@code loader}. */
  static String of(ModuleReference reference, ClassLoader loader) {
    ModuleDescriptor descriptor = reference.descriptor();
    Set<String> exported = descriptor.exports().stream().filter(e -> !e.isQualified())
        .map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
    StringBuilder text = new StringBuilder();
    text.append("module ").append(descriptor.name()).append('\n');
    new TreeSet<>(exported).forEach(p -> text.append("  exports ").append(p).append('\n'));
    descriptor.requires().stream().filter(r -> r.modifiers().contains(Requires.Modifier.TRANSITIVE))
        .map(Requires::name).sorted().forEach(r -> text.append("  requires transitive ").append(r).append('\n'));
    for (Class<?> type : apiTypes(reference, exported, loader)) {
      text.append('\n').append(declaration(type)).append('\n');
      members(type).forEach(m -> text.append("  ").append(m).append('\n'));
    }
    return text.toString();
  }

  private static List<Class<?>> apiTypes(ModuleReference reference, Set<String> exported, ClassLoader loader) {
    List<Class<?>> types = new ArrayList<>();
    try (ModuleReader reader = reference.open(); Stream<String> resources = reader.list()) {
      for (String resource : resources.filter(r -> r.endsWith(".class")).toList()) {
        String binaryName = resource.substring(0, resource.length() - ".class".length()).replace('/', '.');
        int dot = binaryName.lastIndexOf('.');
        if (dot < 0 || !exported.contains(binaryName.substring(0, dot))) {
          continue;
        }
        Class<?> type = Class.forName(binaryName, false, loader);
        if (isApi(type)) {
          types.add(type);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(reference.descriptor().name() + ": a class of the module is not on the class path", e);
    }
    types.sort(Comparator.comparing(ApiSurface::name));
    return types;
  }

  /** Whether code outside the module can name {@code type} (its package exported). */
  static boolean isApi(Class<?> type) {
    if (type.isAnonymousClass() || type.isLocalClass() || type.isSynthetic()) {
      return false;
    }
    Class<?> enclosing = type.getEnclosingClass();
    if (enclosing == null) {
      return Modifier.isPublic(type.getModifiers());
    }
    return isApi(enclosing) && (Modifier.isPublic(type.getModifiers())
        || Modifier.isProtected(type.getModifiers()) && canExtend(enclosing));
  }

  private static boolean canExtend(Class<?> type) {
    return !type.isInterface() && !type.isEnum() && !type.isRecord() && !Modifier.isFinal(type.getModifiers());
  }

  private static boolean isApiMember(Class<?> owner, int modifiers) {
    return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers) && canExtend(owner);
  }

  // --- the type's line ---

  private static String declaration(Class<?> type) {
    List<String> words = new ArrayList<>(annotations(type));
    int mod = type.getModifiers();
    words.add(Modifier.isPublic(mod) ? "public" : "protected");
    if (type.getEnclosingClass() != null && Modifier.isStatic(mod) && !type.isInterface() && !type.isEnum()
        && !type.isRecord()) {
      words.add("static");
    }
    if (type.isAnnotation()) {
      words.add("@interface");
    } else if (type.isInterface()) {
      words.add(type.isSealed() ? "sealed interface" : "interface");
    } else if (type.isEnum()) {
      words.add("enum");
    } else if (type.isRecord()) {
      words.add("record");
    } else {
      if (Modifier.isAbstract(mod)) {
        words.add("abstract");
      }
      if (Modifier.isFinal(mod)) {
        words.add("final");
      }
      if (type.isSealed()) {
        words.add("sealed");
      }
      words.add("class");
    }
    String components = !type.isRecord() ? "" : Arrays.stream(type.getRecordComponents())
        .map(c -> typeName(c.getGenericType()) + " " + c.getName()).collect(Collectors.joining(", ", "(", ")"));
    words.add(name(type) + typeParameters(type.getTypeParameters()) + components);
    if (!type.isInterface() && !type.isEnum() && !type.isRecord()) {
      Type superclass = apiSuperclass(type);
      if (superclass != null && superclass != Object.class) {
        words.add("extends " + typeName(superclass));
      }
    }
    List<String> interfaces = apiInterfaces(type);
    if (!interfaces.isEmpty() && !type.isAnnotation()) {
      words.add((type.isInterface() ? "extends " : "implements ") + String.join(", ", interfaces));
    }
    if (type.isSealed()) {
      words.add("permits " + permitted(type).stream().map(ApiSurface::name).sorted().collect(Collectors.joining(", ")));
    }
    return String.join(" ", words);
  }

  /** The nearest superclass that code outside can name: a package-private one in between is not shown. */
  private static Type apiSuperclass(Class<?> type) {
    Type superclass = type.getGenericSuperclass();
    while (superclass != null && !isApi(raw(superclass))) {
      superclass = raw(superclass).getGenericSuperclass();
    }
    return superclass;
  }

  /** The public interfaces of the type and of the package-private superclasses it hides. */
  private static List<String> apiInterfaces(Class<?> type) {
    Set<String> names = new LinkedHashSet<>();
    for (Class<?> c : withHiddenSuperclasses(type)) {
      for (Type i : c.getGenericInterfaces()) {
        if (isApi(raw(i))) {
          names.add(typeName(i));
        }
      }
    }
    return List.copyOf(names);
  }

  /** The public subtypes a sealed type allows, reached through package-private sealed ones. */
  private static Set<Class<?>> permitted(Class<?> type) {
    Set<Class<?>> found = new LinkedHashSet<>();
    for (Class<?> sub : type.getPermittedSubclasses()) {
      if (isApi(sub)) {
        found.add(sub);
      } else if (sub.isSealed()) {
        found.addAll(permitted(sub));
      }
    }
    return found;
  }

  /** The type, then each superclass up to (not including) the first one code outside can name. */
  private static List<Class<?>> withHiddenSuperclasses(Class<?> type) {
    List<Class<?>> chain = new ArrayList<>();
    chain.add(type);
    for (Class<?> s = type.getSuperclass(); s != null && s != Object.class && !isApi(s); s = s.getSuperclass()) {
      chain.add(s);
    }
    return chain;
  }

  // --- the members ---

  private record Line(int kind, String name, String text) {}

  private static List<String> members(Class<?> type) {
    List<Line> lines = new ArrayList<>();
    Set<String> seenMethods = new LinkedHashSet<>();
    Set<String> seenFields = new LinkedHashSet<>();
    for (Class<?> c : withHiddenSuperclasses(type)) {
      for (Field f : c.getDeclaredFields()) {
        if (!f.isSynthetic() && isApiMember(type, f.getModifiers()) && seenFields.add(f.getName())) {
          lines.add(f.isEnumConstant() ? new Line(0, f.getName(), "enum constant " + f.getName())
              : new Line(1, f.getName(), field(f)));
        }
      }
      if (c == type) {
        for (Constructor<?> k : c.getDeclaredConstructors()) {
          if (!k.isSynthetic() && isApiMember(type, k.getModifiers())) {
            lines.add(new Line(2, "", executable(k, type.getSimpleName(), "")));
          }
        }
      }
      for (Method m : c.getDeclaredMethods()) {
        if (m.isSynthetic() || m.isBridge() || !isApiMember(type, m.getModifiers())) {
          continue;
        }
        String key = m.getName() + Arrays.toString(m.getParameterTypes());
        if (seenMethods.add(key)) {
          lines.add(new Line(3, m.getName(), method(m, type)));
        }
      }
    }
    lines.sort(Comparator.comparingInt(Line::kind).thenComparing(Line::name).thenComparing(Line::text));
    return lines.stream().map(Line::text).toList();
  }

  private static String field(Field f) {
    List<String> words = new ArrayList<>(annotations(f));
    words.add(modifiers(f.getModifiers(), false));
    words.add(typeName(f.getGenericType()) + " " + f.getName());
    return join(words);
  }

  private static String method(Method m, Class<?> owner) {
    if (owner.isAnnotation()) {
      Object value = m.getDefaultValue();
      return join(List.of(String.join(" ", annotations(m)), typeName(m.getGenericReturnType()) + " " + m.getName() + "()"
          + (value == null ? "" : " default " + literal(value))));
    }
    return executable(m, m.getName(), typeName(m.getGenericReturnType()));
  }

  private static String executable(Executable e, String name, String returnType) {
    List<String> words = new ArrayList<>(annotations(e));
    words.add(modifiers(e.getModifiers(), e instanceof Method m && m.isDefault()));
    words.add(typeParameters(e.getTypeParameters()));
    words.add(returnType);
    Type[] params = e.getGenericParameterTypes();
    List<String> shown = new ArrayList<>();
    for (int i = 0; i < params.length; i++) {
      String param = typeName(params[i]);
      if (e.isVarArgs() && i == params.length - 1) {
        param = param.substring(0, param.length() - 2) + "...";
      }
      shown.add(param);
    }
    String signature = name + "(" + String.join(", ", shown) + ")";
    Type[] thrown = e.getGenericExceptionTypes();
    if (thrown.length > 0) {
      signature += " throws " + Arrays.stream(thrown).map(ApiSurface::typeName).sorted().collect(Collectors.joining(", "));
    }
    words.add(signature);
    return join(words);
  }

  private static String modifiers(int mod, boolean isDefault) {
    List<String> words = new ArrayList<>();
    words.add(Modifier.isPublic(mod) ? "public" : "protected");
    if (Modifier.isStatic(mod)) {
      words.add("static");
    }
    if (Modifier.isAbstract(mod)) {
      words.add("abstract");
    }
    if (isDefault) {
      words.add("default");
    }
    if (Modifier.isFinal(mod)) {
      words.add("final");
    }
    return String.join(" ", words);
  }

  // --- names, annotations, literals ---

  /** The annotations that are part of an element's documented API (their types are {@code @Documented}). */
  private static List<String> annotations(AnnotatedElement element) {
    List<String> shown = new ArrayList<>();
    for (Annotation a : element.getDeclaredAnnotations()) {
      Class<? extends Annotation> kind = a.annotationType();
      if (!kind.isAnnotationPresent(Documented.class)) {
        continue;
      }
      String text = "@" + name(kind);
      if (a instanceof Retention r) {
        text += "(" + r.value() + ")";
      } else if (a instanceof Target t) {
        text += "(" + Arrays.stream(t.value()).map(ElementType::name).sorted().collect(Collectors.joining(", ", "{", "}")) + ")";
      } else if (a instanceof Repeatable r) {
        text += "(" + name(r.value()) + ".class)";
      } else if (a instanceof Deprecated d) {
        text += "(since=" + literal(d.since()) + ", forRemoval=" + d.forRemoval() + ")";
      } else if (!(a instanceof Documented) && !(a instanceof Inherited) && !(a instanceof FunctionalInterface)) {
        text = a.toString();
      }
      shown.add(text);
    }
    shown.sort(null);
    return shown;
  }

  static String name(Class<?> type) {
    if (type.isArray()) {
      return name(type.getComponentType()) + "[]";
    }
    String canonical = type.getCanonicalName();
    return canonical != null ? canonical : type.getName();
  }

  private static String typeName(Type type) {
    return switch (type) {
      case Class<?> c -> name(c);
      case ParameterizedType p -> name(raw(p)) + Arrays.stream(p.getActualTypeArguments()).map(ApiSurface::typeName)
          .collect(Collectors.joining(", ", "<", ">"));
      case GenericArrayType g -> typeName(g.getGenericComponentType()) + "[]";
      case TypeVariable<?> v -> v.getName();
      case WildcardType w -> w.getLowerBounds().length > 0 ? "? super " + typeName(w.getLowerBounds()[0])
          : w.getUpperBounds().length == 0 || w.getUpperBounds()[0] == Object.class ? "?"
          : "? extends " + typeName(w.getUpperBounds()[0]);
      default -> type.getTypeName();
    };
  }

  private static String typeParameters(TypeVariable<?>[] variables) {
    if (variables.length == 0) {
      return "";
    }
    return Arrays.stream(variables).map(v -> {
      List<Type> bounds = Arrays.stream(v.getBounds()).filter(b -> b != Object.class).toList();
      return bounds.isEmpty() ? v.getName()
          : v.getName() + " extends " + bounds.stream().map(ApiSurface::typeName).collect(Collectors.joining(" & "));
    }).collect(Collectors.joining(", ", "<", ">"));
  }

  private static Class<?> raw(Type type) {
    return switch (type) {
      case Class<?> c -> c;
      case ParameterizedType p -> (Class<?>) p.getRawType();
      default -> throw new IllegalArgumentException("not a class type: " + type);
    };
  }

  /** An annotation element's default as Java source would write it. */
  private static String literal(Object value) {
    return switch (value) {
      case String s -> "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
      case Character c -> "'" + c + "'";
      case Long l -> l + "L";
      case Float f -> f + "f";
      case Enum<?> e -> e.getDeclaringClass().getSimpleName() + "." + e.name();
      case Class<?> c -> name(c) + ".class";
      case Annotation a -> a.toString();
      default -> {
        if (value.getClass().isArray()) {
          List<String> items = new ArrayList<>();
          for (int i = 0; i < Array.getLength(value); i++) {
            items.add(literal(Array.get(value, i)));
          }
          yield String.join(", ", items).transform(s -> "{" + s + "}");
        }
        yield String.valueOf(value);
      }
    };
  }

  private static String join(List<String> words) {
    return words.stream().filter(w -> !w.isEmpty()).collect(Collectors.joining(" "));
  }
}
